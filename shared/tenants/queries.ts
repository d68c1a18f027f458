// SQL for tenants.
import type { Queryable } from '../db/connection.js';

export interface Tenant {
  id: string;
  name: string;
  slug: string;
  plan_id: string;
  is_sandbox: boolean;
  is_super_admin: boolean;
  status: 'active' | 'suspended';
  created_at: Date;
  updated_at: Date;
}

export async function insertTenant(
  db: Queryable,
  t: { name: string; slug: string; planId?: string; isSuperAdmin?: boolean },
): Promise<Tenant> {
  const [row] = await db<Tenant[]>`
    insert into tenants (name, slug, plan_id, is_super_admin)
    values (${t.name}, ${t.slug}, ${t.planId ?? 'free'}, ${t.isSuperAdmin ?? false})
    returning *`;
  return row!;
}

export async function findTenantById(db: Queryable, id: string): Promise<Tenant | undefined> {
  const [row] = await db<Tenant[]>`select * from tenants where id = ${id}`;
  return row;
}

export async function findSuperAdminTenant(db: Queryable): Promise<Tenant | undefined> {
  const [row] = await db<Tenant[]>`select * from tenants where is_super_admin`;
  return row;
}

export interface TenantSummary extends Tenant {
  user_count: number;
  api_key_count: number;
}

export async function listTenants(db: Queryable, page: { limit: number; offset: number }): Promise<{ items: TenantSummary[]; total: number }> {
  const items = await db<TenantSummary[]>`
    select t.*,
      (select count(*)::int from users u where u.tenant_id = t.id) as user_count,
      (select count(*)::int from api_keys k where k.tenant_id = t.id and k.revoked_at is null) as api_key_count
    from tenants t
    order by t.created_at desc, t.id
    limit ${page.limit} offset ${page.offset}`;
  const [count] = await db<{ total: number }[]>`select count(*)::int as total from tenants`;
  return { items, total: count!.total };
}

export async function getTenantSummary(db: Queryable, id: string): Promise<TenantSummary | undefined> {
  const [row] = await db<TenantSummary[]>`
    select t.*,
      (select count(*)::int from users u where u.tenant_id = t.id) as user_count,
      (select count(*)::int from api_keys k where k.tenant_id = t.id and k.revoked_at is null) as api_key_count
    from tenants t where t.id = ${id}`;
  return row;
}
