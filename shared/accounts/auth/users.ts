// SQL for users.
import type { Queryable } from '../../db/connection.js';

export type UserRole = 'owner' | 'admin' | 'developer' | 'viewer';

export interface User {
  id: string;
  tenant_id: string;
  email: string;
  password_hash: string;
  first_name: string | null;
  role: UserRole;
  is_super_admin: boolean;
  sessions_valid_after: Date;
  created_at: Date;
}

export async function insertUser(
  db: Queryable,
  u: { tenantId: string; email: string; passwordHash: string; role: UserRole; isSuperAdmin?: boolean; firstName?: string | null },
): Promise<User> {
  const [row] = await db<User[]>`
    insert into users (tenant_id, email, password_hash, role, is_super_admin, first_name)
    values (${u.tenantId}, ${u.email}, ${u.passwordHash}, ${u.role}, ${u.isSuperAdmin ?? false}, ${u.firstName ?? null})
    returning *`;
  return row!;
}

export async function findUserByEmail(db: Queryable, email: string): Promise<User | undefined> {
  const [row] = await db<User[]>`select * from users where lower(email) = lower(${email})`;
  return row;
}

export async function findUserById(db: Queryable, id: string): Promise<User | undefined> {
  const [row] = await db<User[]>`select * from users where id = ${id}`;
  return row;
}
