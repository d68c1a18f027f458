// SQL for sending domains, their records and DKIM keys. Every query a tenant can reach is scoped to its tenant.
import type { Queryable } from '../../db/connection.js';
import type { ExpectedRecord, RecordKind } from './records.js';

export interface DomainRow {
  id: string;
  tenant_id: string;
  name: string;
  unicode_name: string;
  verified_at: Date | null;
  drifted_at: Date | null;
  last_checked_at: Date | null;
  created_at: Date;
  /** When this claim proved control of the name (its DKIM record found); null while it has not. */
  owned_at: Date | null;
  /** Another tenant's claim of the name proved control first: closed, never verifies. */
  superseded_at: Date | null;
  /** An unowned claim is removed after this; null once owned. */
  expires_at: Date | null;
}

export interface RecordRow {
  domain_id: string;
  kind: RecordKind;
  type: 'TXT' | 'MX';
  host: string;
  expected: string;
  priority: number | null;
  verified: boolean;
  found: string | null;
  error: string | null;
  verified_at: Date | null;
  drifted_at: Date | null;
  last_checked_at: Date | null;
}

export type KeyState = 'pending' | 'active' | 'retiring' | 'retired';

export interface DkimKeyRow {
  id: string;
  tenant_id: string;
  domain_id: string;
  selector: string;
  key_bits: number;
  public_key: string;
  state: KeyState;
  created_at: Date;
  activated_at: Date | null;
  retiring_at: Date | null;
  retired_at: Date | null;
}

const domainColumns = (db: Queryable) =>
  db`id, tenant_id, name, unicode_name, verified_at, drifted_at, last_checked_at, created_at, owned_at, superseded_at, expires_at`;
const keyColumns = (db: Queryable) => db`id, tenant_id, domain_id, selector, key_bits, public_key, state, created_at, activated_at, retiring_at, retired_at`;

/** A new claim: pending (not owned) until its DKIM record is found, removed after `expiresAt` otherwise. */
export async function insertDomain(db: Queryable, d: { tenantId: string; name: string; unicodeName: string; at: Date; expiresAt: Date }): Promise<DomainRow> {
  const [row] = await db<DomainRow[]>`
    insert into domains (tenant_id, name, unicode_name, created_at, expires_at)
    values (${d.tenantId}, ${d.name}, ${d.unicodeName}, ${d.at}, ${d.expiresAt})
    returning ${domainColumns(db)}`;
  return row!;
}

export async function findDomain(db: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<DomainRow | undefined> {
  const [row] = options.lock
    ? await db<DomainRow[]>`select ${domainColumns(db)} from domains where tenant_id = ${tenantId} and id = ${id} for update`
    : await db<DomainRow[]>`select ${domainColumns(db)} from domains where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

/** A domain by id whatever its tenant (super-admin operations). */
export async function findDomainById(db: Queryable, id: string): Promise<DomainRow | undefined> {
  const [row] = await db<DomainRow[]>`select ${domainColumns(db)} from domains where id = ${id}`;
  return row;
}

/** A page of a tenant's domains, newest first, after a (created_at, id) keyset position. */
export async function listDomains(db: Queryable, tenantId: string, page: { limit: number; after?: { at: Date; id: string } }): Promise<DomainRow[]> {
  const after = page.after;
  return db<DomainRow[]>`
    select ${domainColumns(db)} from domains
    where tenant_id = ${tenantId}
      ${after ? db`and (created_at, id) < (${after.at}, ${after.id})` : db``}
    order by created_at desc, id desc
    limit ${page.limit}`;
}

export async function countDomains(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from domains where tenant_id = ${tenantId}`;
  return row!.n;
}

export async function deleteDomain(db: Queryable, tenantId: string, id: string): Promise<DomainRow | undefined> {
  const [row] = await db<DomainRow[]>`delete from domains where tenant_id = ${tenantId} and id = ${id} returning ${domainColumns(db)}`;
  return row;
}

export async function updateDomainStatus(db: Queryable, id: string, s: { verifiedAt: Date | null; driftedAt: Date | null; checkedAt: Date }): Promise<void> {
  await db`update domains set verified_at = ${s.verifiedAt}, drifted_at = ${s.driftedAt}, last_checked_at = ${s.checkedAt} where id = ${id}`;
}

export async function insertRecords(db: Queryable, domainId: string, records: ExpectedRecord[]): Promise<void> {
  for (const r of records) {
    await db`
      insert into domain_records (domain_id, kind, type, host, expected, priority)
      values (${domainId}, ${r.kind}, ${r.type}, ${r.host}, ${r.value}, ${r.priority})`;
  }
}

export async function listRecords(db: Queryable, domainIds: string[]): Promise<RecordRow[]> {
  if (domainIds.length === 0) return [];
  return db<RecordRow[]>`
    select domain_id, kind, type, host, expected, priority, verified, found, error, verified_at, drifted_at, last_checked_at
    from domain_records where domain_id = any(${domainIds}::uuid[])
    order by domain_id, array_position(array['spf','dkim','dmarc','mx'], kind)`;
}

export interface StoredCheck {
  kind: RecordKind;
  verified: boolean;
  found: string | null;
  error: string | null;
  verifiedAt: Date | null;
  driftedAt: Date | null;
}

/** Stores the outcome of a check of several records of one domain in one statement. */
export async function saveChecks(db: Queryable, domainId: string, checks: StoredCheck[], at: Date): Promise<void> {
  if (checks.length === 0) return;
  const stamp = (d: Date | null) => d?.toISOString() ?? null;
  await db`
    update domain_records r
    set verified = c.verified, found = c.found, error = c.error, verified_at = c.verified_at,
        drifted_at = c.drifted_at, last_checked_at = ${at}
    from unnest(${checks.map((c) => c.kind)}::text[], ${checks.map((c) => String(c.verified))}::text[]::boolean[],
                ${checks.map((c) => c.found) as string[]}::text[], ${checks.map((c) => c.error) as string[]}::text[],
                ${checks.map((c) => stamp(c.verifiedAt)) as string[]}::timestamptz[], ${checks.map((c) => stamp(c.driftedAt)) as string[]}::timestamptz[])
      as c(kind, verified, found, error, verified_at, drifted_at)
    where r.domain_id = ${domainId} and r.kind = c.kind`;
}

/** Points the DKIM record at a newly active key; the rotator saw it published, so it counts as verified. */
export async function replaceDkimRecord(db: Queryable, domainId: string, r: ExpectedRecord, found: string, at: Date): Promise<void> {
  await db`
    update domain_records
    set host = ${r.host}, expected = ${r.value}, verified = true, found = ${found}, error = null,
        verified_at = ${at}, last_checked_at = ${at}
    where domain_id = ${domainId} and kind = 'dkim'`;
}

export async function insertDkimKey(
  db: Queryable,
  k: { tenantId: string; domainId: string; selector: string; keyBits: number; publicKey: string; privateKeySealed: Buffer; state: KeyState; at: Date },
): Promise<DkimKeyRow> {
  const [row] = await db<DkimKeyRow[]>`
    insert into dkim_keys (tenant_id, domain_id, selector, key_bits, public_key, private_key_sealed, state, created_at, activated_at)
    values (${k.tenantId}, ${k.domainId}, ${k.selector}, ${k.keyBits}, ${k.publicKey}, ${k.privateKeySealed}, ${k.state}, ${k.at},
            ${k.state === 'active' ? k.at : null})
    returning ${keyColumns(db)}`;
  return row!;
}

export async function findKeys(db: Queryable, ids: string[]): Promise<DkimKeyRow[]> {
  if (ids.length === 0) return [];
  return db<DkimKeyRow[]>`select ${keyColumns(db)} from dkim_keys where id = any(${ids}::uuid[])`;
}

export async function activeKeys(db: Queryable, domainIds: string[]): Promise<DkimKeyRow[]> {
  if (domainIds.length === 0) return [];
  return db<DkimKeyRow[]>`select ${keyColumns(db)} from dkim_keys where domain_id = any(${domainIds}::uuid[]) and state = 'active'`;
}

export async function selectorsOf(db: Queryable, domainId: string): Promise<string[]> {
  const rows = await db<{ selector: string }[]>`select selector from dkim_keys where domain_id = ${domainId}`;
  return rows.map((r) => r.selector);
}

export async function setKeyState(db: Queryable, id: string, state: KeyState, at: Date): Promise<void> {
  await db`
    update dkim_keys set state = ${state},
      activated_at = case when ${state} = 'active' then ${at} else activated_at end,
      retiring_at = case when ${state} = 'retiring' then ${at} else retiring_at end,
      retired_at = case when ${state} = 'retired' then ${at} else null end
    where id = ${id}`;
}

/** The sealed private key of a domain's live signer (for the outbound signer). */
export async function activeSigningKey(db: Queryable, domainId: string): Promise<(DkimKeyRow & { private_key_sealed: Buffer }) | undefined> {
  const [row] = await db<(DkimKeyRow & { private_key_sealed: Buffer })[]>`
    select ${keyColumns(db)}, private_key_sealed from dkim_keys where domain_id = ${domainId} and state = 'active'`;
  return row;
}

/** Active keys created before a date whose domain owns its name and has no rotation in flight (automatic rotation). */
export async function keysOlderThan(db: Queryable, createdBefore: Date, limit: number): Promise<DkimKeyRow[]> {
  return db<DkimKeyRow[]>`
    select ${keyColumns(db)} from dkim_keys k
    where k.state = 'active' and k.created_at < ${createdBefore}
      and exists (select 1 from domains d where d.id = k.domain_id and d.owned_at is not null)
      and not exists (select 1 from dkim_rotations r where r.domain_id = k.domain_id and r.state <> 'retired')
    order by k.created_at
    limit ${limit}`;
}

/** Locks a domain row by id alone (workers act across tenants). */
export async function lockDomainById(db: Queryable, id: string): Promise<DomainRow | undefined> {
  const [row] = await db<DomainRow[]>`select ${domainColumns(db)} from domains where id = ${id} for update`;
  return row;
}

/** All open claims (owned or pending, not superseded) in id order after a position: the scheduled re-check walks them in pages. */
export async function domainsAfter(db: Queryable, afterId: string | null, limit: number): Promise<DomainRow[]> {
  return db<DomainRow[]>`
    select ${domainColumns(db)} from domains
    where superseded_at is null ${afterId ? db`and id > ${afterId}` : db``}
    order by id limit ${limit}`;
}

/** Points the DKIM record at another key, unverified until the next check looks at DNS. */
export async function pointDkimRecord(db: Queryable, domainId: string, r: ExpectedRecord): Promise<void> {
  await db`
    update domain_records
    set host = ${r.host}, expected = ${r.value}, verified = false, found = null, error = 'not yet checked', verified_at = null
    where domain_id = ${domainId} and kind = 'dkim'`;
}

/**
 * Every open claim of these tenants (A-label names; superseded claims left out) and whether it may send now:
 * only a claim that owns its name (proved control) with SPF, DKIM and DMARC verified, not drifted. One query for many senders.
 */
export async function tenantDomainsOf(
  db: Queryable,
  tenantIds: readonly string[],
): Promise<(Pick<DomainRow, 'id' | 'name' | 'tenant_id'> & { can_send: boolean })[]> {
  if (tenantIds.length === 0) return [];
  return db<(Pick<DomainRow, 'id' | 'name' | 'tenant_id'> & { can_send: boolean })[]>`
    select id, name, tenant_id, (verified_at is not null and owned_at is not null) as can_send from domains
    where tenant_id = any(${tenantIds}::uuid[]) and superseded_at is null`;
}
