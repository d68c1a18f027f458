// SQL for DKIM rotations: the in-flight row per domain, its transitions, and the admin lists.
import type { Queryable } from '../../db/connection.js';

export type RotationState = 'pending' | 'publishing' | 'active' | 'retiring' | 'retired';
export type RotationInitiator = 'tenant' | 'admin' | 'auto';

export interface ResolverResult {
  resolver: string;
  /** The resolver returned the new key's TXT record. */
  published: boolean;
  found: string | null;
  error: string | null;
}

export interface RotationRow {
  id: string;
  tenant_id: string;
  domain_id: string;
  old_key_id: string | null;
  new_key_id: string;
  state: RotationState;
  reason: string | null;
  initiated_by: RotationInitiator;
  dns_provider_managed: boolean;
  dns_published_at: Date | null;
  error: string | null;
  resolver_results: ResolverResult[];
  last_checked_at: Date | null;
  created_at: Date;
  updated_at: Date;
  activated_at: Date | null;
  retire_after: Date | null;
  retired_at: Date | null;
  rolled_back_at: Date | null;
}

/** A rotation with the names the lists and audit rows show. */
export interface RotationView extends RotationRow {
  domain_name: string;
  old_selector: string | null;
  new_selector: string;
  new_public_key: string;
}

export const IN_FLIGHT_CONSTRAINT = 'dkim_rotations_one_in_flight';

const viewSelect = (db: Queryable) => db`
  select r.*, d.name as domain_name, ok.selector as old_selector, nk.selector as new_selector, nk.public_key as new_public_key
  from dkim_rotations r
  join domains d on d.id = r.domain_id
  join dkim_keys nk on nk.id = r.new_key_id
  left join dkim_keys ok on ok.id = r.old_key_id`;

export async function insertRotation(
  db: Queryable,
  r: { tenantId: string; domainId: string; oldKeyId: string | null; newKeyId: string; reason: string | null; initiatedBy: RotationInitiator; at: Date },
): Promise<RotationRow> {
  const [row] = await db<RotationRow[]>`
    insert into dkim_rotations (tenant_id, domain_id, old_key_id, new_key_id, state, reason, initiated_by, created_at, updated_at)
    values (${r.tenantId}, ${r.domainId}, ${r.oldKeyId}, ${r.newKeyId}, 'pending', ${r.reason}, ${r.initiatedBy}, ${r.at}, ${r.at})
    returning *`;
  return row!;
}

export async function findRotationView(db: Queryable, id: string, tenantId?: string): Promise<RotationView | undefined> {
  const [row] = await db<RotationView[]>`
    ${viewSelect(db)} where r.id = ${id} ${tenantId ? db`and r.tenant_id = ${tenantId}` : db``}`;
  return row;
}

/** Locks a rotation row for a transition; the caller re-reads its state under the lock. */
export async function lockRotation(db: Queryable, id: string): Promise<RotationRow | undefined> {
  const [row] = await db<RotationRow[]>`select * from dkim_rotations where id = ${id} for update`;
  return row;
}

export async function updateRotation(
  db: Queryable,
  id: string,
  fields: Partial<
    Pick<
      RotationRow,
      'state' | 'dns_published_at' | 'error' | 'resolver_results' | 'last_checked_at' | 'activated_at' | 'retire_after' | 'retired_at' | 'rolled_back_at'
    >
  >,
  at: Date,
): Promise<void> {
  const values: Record<string, unknown> = { ...fields, updated_at: at };
  if (fields.resolver_results) values['resolver_results'] = db.json(fields.resolver_results as never);
  await db`update dkim_rotations set ${db(values as Record<string, never>)} where id = ${id}`;
}

export async function inFlightRotationViews(db: Queryable, domainIds: string[]): Promise<RotationView[]> {
  if (domainIds.length === 0) return [];
  return db<RotationView[]>`${viewSelect(db)} where r.domain_id = any(${domainIds}::uuid[]) and r.state <> 'retired'`;
}

export async function listDomainRotations(db: Queryable, tenantId: string, domainId: string, limit: number): Promise<RotationView[]> {
  return db<RotationView[]>`
    ${viewSelect(db)} where r.tenant_id = ${tenantId} and r.domain_id = ${domainId}
    order by r.created_at desc, r.id desc limit ${limit}`;
}

/** Rotations in the given states across tenants, oldest first (the rotator's work list). */
export async function rotationsInStates(db: Queryable, states: RotationState[], limit: number): Promise<RotationView[]> {
  return db<RotationView[]>`
    ${viewSelect(db)} where r.state = any(${states}::text[]) order by r.created_at, r.id limit ${limit}`;
}

/** The admin list: in-flight rotations (or all), newest first. */
export async function listRotations(db: Queryable, f: { limit: number; offset: number; tenantId?: string; includeRetired: boolean }): Promise<RotationView[]> {
  return db<RotationView[]>`
    ${viewSelect(db)}
    where true
      ${f.includeRetired ? db`` : db`and r.state <> 'retired'`}
      ${f.tenantId ? db`and r.tenant_id = ${f.tenantId}` : db``}
    order by r.created_at desc, r.id desc
    limit ${f.limit} offset ${f.offset}`;
}
