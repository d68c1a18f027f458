// SQL for tenants.
import type { Queryable } from '../../db/connection.js';

export interface Tenant {
  id: string;
  name: string;
  slug: string;
  plan_id: string;
  is_sandbox: boolean;
  is_super_admin: boolean;
  status: 'active' | 'suspended';
  /** Set while suspended (migration 070). */
  suspended_at: Date | null;
  suspension_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

export async function insertTenant(db: Queryable, t: { name: string; slug: string; planId?: string; isSuperAdmin?: boolean }): Promise<Tenant> {
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

/** The tenant's row, locked until the end of `tx` (a status change or deletion in progress). */
export async function lockTenant(tx: Queryable, id: string): Promise<Tenant | undefined> {
  const [row] = await tx<Tenant[]>`select * from tenants where id = ${id} for update`;
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

/** The list's filters; each one given narrows the list (AND). */
export interface TenantFilters {
  status?: 'active' | 'suspended' | undefined;
  plan?: string | undefined;
  sandbox?: boolean | undefined;
  /** Part of the name or slug (case-insensitive), or a whole tenant id. */
  q?: string | undefined;
}

/** Whitelisted sort keys: the column and direction are never taken from the request as text. */
export const TENANT_SORTS = {
  created_at: 't.created_at asc, t.id asc',
  '-created_at': 't.created_at desc, t.id desc',
  name: 'lower(t.name) asc, t.id asc',
  '-name': 'lower(t.name) desc, t.id desc',
  slug: 't.slug asc',
  '-slug': 't.slug desc',
} as const;
export type TenantSort = keyof typeof TENANT_SORTS;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function likePattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function listTenants(
  db: Queryable,
  page: { limit: number; offset: number; sort?: TenantSort },
  filters: TenantFilters = {},
): Promise<{ items: TenantSummary[]; total: number }> {
  const q = filters.q?.trim() || undefined;
  // A function, so each statement gets a fragment of its own.
  const where = () => db`
    where (${filters.status ?? null}::text is null or t.status = ${filters.status ?? null})
      and (${filters.plan ?? null}::text is null or t.plan_id = ${filters.plan ?? null})
      and (${filters.sandbox ?? null}::boolean is null or t.is_sandbox = ${filters.sandbox ?? null})
      and (${q ?? null}::text is null
           or t.name ilike ${q ? likePattern(q) : null} or t.slug ilike ${q ? likePattern(q) : null}
           or (${q !== undefined && UUID_RE.test(q)} and t.id::text = lower(${q ?? ''})))`;
  const items = await db<TenantSummary[]>`
    select t.*,
      (select count(*)::int from users u where u.tenant_id = t.id) as user_count,
      (select count(*)::int from api_keys k where k.tenant_id = t.id and k.revoked_at is null) as api_key_count
    from tenants t
    ${where()}
    order by ${db.unsafe(TENANT_SORTS[page.sort ?? '-created_at'])}
    limit ${page.limit} offset ${page.offset}`;
  const [count] = await db<{ total: number }[]>`select count(*)::int as total from tenants t ${where()}`;
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

/**
 * Sets a tenant's status; returns the row as it was before (locked for the rest of `tx`), or undefined when unknown.
 * Suspending records when and why; unsuspending clears both.
 */
export async function setTenantStatus(
  tx: Queryable,
  id: string,
  status: 'active' | 'suspended',
  c: { at: Date; reason: string | null },
): Promise<Tenant | undefined> {
  const before = await lockTenant(tx, id);
  if (!before || before.status === status) return before;
  await tx`
    update tenants set status = ${status}, updated_at = ${c.at},
      suspended_at = ${status === 'suspended' ? c.at : null},
      suspension_reason = ${status === 'suspended' ? c.reason : null}
    where id = ${id}`;
  return before;
}

/**
 * The tenant's campaigns whose fan-out waits for the suspension to end (campaigns read here rather than in
 * shared/campaigns: this is the tenant's unsuspension asking, and the answer is only ids).
 */
export async function campaignsWaitingForUnsuspension(db: Queryable, tenantId: string): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    select id from campaigns where tenant_id = ${tenantId} and status = 'sending' and waiting_reason = 'tenant_suspended'`;
  return rows.map((r) => r.id);
}

/**
 * Deletes a tenant and, through the foreign keys (on delete cascade), every row of its data; then the inbound
 * messages only it received (they have no tenant column: their recipients had it). Returns false when unknown.
 * The audit log is kept: it is an append-only hash chain, and the record of what was done to the tenant.
 */
export async function deleteTenantCascade(tx: Queryable, id: string): Promise<boolean> {
  const messages = await tx<{ message_id: string }[]>`
    select message_id from inbound_recipients where tenant_id = ${id}
    union select inbound_message_id from mailbox_messages where tenant_id = ${id}`;
  const deleted = await tx`delete from tenants where id = ${id} and not is_super_admin`;
  if (deleted.count === 0) return false;
  if (messages.length > 0) {
    // A message also addressed to another tenant stays: it is theirs too.
    await tx`
      delete from inbound_messages m
      where m.id = any(${messages.map((r) => r.message_id)}::uuid[])
        and not exists (select 1 from inbound_recipients r where r.message_id = m.id)
        and not exists (select 1 from mailbox_messages b where b.inbound_message_id = m.id)`;
  }
  return true;
}
