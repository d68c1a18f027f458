// SQL for team members and invites. Every query a tenant can reach is scoped to its tenant; the token look-up is by hash.
import type { Queryable } from '../../db/connection.js';
import type { UserRole } from '../auth/users.js';

export interface InviteRow {
  id: string;
  tenant_id: string;
  email: string;
  role: UserRole;
  invited_by: string | null;
  created_at: Date;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
}

export interface MemberRow {
  id: string;
  email: string;
  first_name: string | null;
  role: UserRole;
  is_super_admin: boolean;
  created_at: Date;
  two_factor_enabled: boolean;
}

const inviteColumns = (db: Queryable) => db`id, tenant_id, email, role, invited_by, created_at, expires_at, accepted_at, revoked_at`;

/**
 * Locks the tenant row until commit: team changes of one tenant run one at a time, so two concurrent demotions
 * cannot both see a second owner. NO KEY UPDATE leaves inserts referencing the tenant (FK checks) unblocked.
 */
export async function lockTeam(db: Queryable, tenantId: string): Promise<boolean> {
  const rows = await db`select 1 from tenants where id = ${tenantId} for no key update`;
  return rows.length > 0;
}

export async function userExistsWithEmail(db: Queryable, email: string): Promise<boolean> {
  const rows = await db`select 1 from users where lower(email) = lower(${email})`;
  return rows.length > 0;
}

/** An unaccepted, unrevoked and unexpired invite of this email in the tenant. */
export async function findPendingInviteByEmail(db: Queryable, tenantId: string, email: string, now: Date): Promise<InviteRow | undefined> {
  const [row] = await db<InviteRow[]>`
    select ${inviteColumns(db)} from team_invites
    where tenant_id = ${tenantId} and lower(email) = lower(${email})
      and accepted_at is null and revoked_at is null and expires_at > ${now}
    limit 1`;
  return row;
}

export async function insertInvite(
  db: Queryable,
  i: { tenantId: string; email: string; role: UserRole; tokenHash: string; invitedBy: string | null; at: Date; expiresAt: Date },
): Promise<InviteRow> {
  const [row] = await db<InviteRow[]>`
    insert into team_invites (tenant_id, email, role, token_hash, invited_by, created_at, expires_at)
    values (${i.tenantId}, ${i.email}, ${i.role}, ${i.tokenHash}, ${i.invitedBy}, ${i.at}, ${i.expiresAt})
    returning ${inviteColumns(db)}`;
  return row!;
}

/** Pending invites (not accepted, not revoked, not expired), newest first. */
export async function listPendingInvites(db: Queryable, tenantId: string, now: Date): Promise<InviteRow[]> {
  return db<InviteRow[]>`
    select ${inviteColumns(db)} from team_invites
    where tenant_id = ${tenantId} and accepted_at is null and revoked_at is null and expires_at > ${now}
    order by created_at desc, id`;
}

export async function findInvite(db: Queryable, tenantId: string, id: string): Promise<InviteRow | undefined> {
  const [row] = await db<InviteRow[]>`select ${inviteColumns(db)} from team_invites where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

export async function revokeInvite(db: Queryable, tenantId: string, id: string, at: Date): Promise<InviteRow | undefined> {
  const [row] = await db<InviteRow[]>`
    update team_invites set revoked_at = ${at}
    where tenant_id = ${tenantId} and id = ${id} and accepted_at is null and revoked_at is null
    returning ${inviteColumns(db)}`;
  return row;
}

export async function findInviteByTokenHash(db: Queryable, tokenHash: string): Promise<InviteRow | undefined> {
  const [row] = await db<InviteRow[]>`select ${inviteColumns(db)} from team_invites where token_hash = ${tokenHash}`;
  return row;
}

/**
 * Marks the invite accepted if it still can be: one statement, so of two concurrent accepts the second waits
 * for the first's row lock, re-reads accepted_at and claims nothing.
 */
export async function claimInvite(db: Queryable, tokenHash: string, at: Date): Promise<InviteRow | undefined> {
  const [row] = await db<InviteRow[]>`
    update team_invites set accepted_at = ${at}
    where token_hash = ${tokenHash} and accepted_at is null and revoked_at is null and expires_at > ${at}
    returning ${inviteColumns(db)}`;
  return row;
}

export async function setInviteUser(db: Queryable, inviteId: string, userId: string): Promise<void> {
  await db`update team_invites set accepted_user_id = ${userId} where id = ${inviteId}`;
}

const memberColumns = (db: Queryable) => db`
  u.id, u.email, u.first_name, u.role, u.is_super_admin, u.created_at,
  exists (select 1 from user_totp t where t.user_id = u.id and t.enabled_at is not null) as two_factor_enabled`;

export async function listMembers(db: Queryable, tenantId: string): Promise<MemberRow[]> {
  return db<MemberRow[]>`select ${memberColumns(db)} from users u where u.tenant_id = ${tenantId} order by u.created_at, u.id`;
}

export async function findMember(db: Queryable, tenantId: string, id: string): Promise<MemberRow | undefined> {
  const [row] = await db<MemberRow[]>`select ${memberColumns(db)} from users u where u.tenant_id = ${tenantId} and u.id = ${id}`;
  return row;
}

export async function countOwners(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from users where tenant_id = ${tenantId} and role = 'owner'`;
  return row!.n;
}

export async function setMemberRole(db: Queryable, tenantId: string, id: string, role: UserRole, at: Date): Promise<void> {
  await db`update users set role = ${role}, updated_at = ${at} where tenant_id = ${tenantId} and id = ${id}`;
}

/** Deletes the user: their session tokens stop resolving (no user row), rows they created keep a null creator. */
export async function deleteMember(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const rows = await db`delete from users where tenant_id = ${tenantId} and id = ${id} returning id`;
  return rows.length > 0;
}
