// SQL for the per-tenant suppression list. Every query is scoped to its tenant; emails arrive already normalized.
// Rows are matched by email_hash (SHA-256 of the normalized address, computed in SQL), so an erased person's
// hash-only row (email null) still matches the address.
import type { Queryable } from '../../db/connection.js';
import type { SuppressionReason, SuppressionSource } from './reasons.js';

/** The unique keys of a suppression: the address (null once erased) and its hash (always). */
export const SUPPRESSION_EMAIL_KEY = 'suppressions_tenant_email_key';
export const SUPPRESSION_HASH_KEY = 'suppressions_tenant_hash_key';

export interface SuppressionRow {
  id: string;
  tenant_id: string;
  /** Null for an erased person's entry: only the hash is kept. */
  email: string | null;
  reason: SuppressionReason;
  source: SuppressionSource;
  detail: string | null;
  message_id: string | null;
  created_at: Date;
}

export interface NewSuppression {
  tenantId: string;
  email: string;
  reason: SuppressionReason;
  source: SuppressionSource;
  detail: string | null;
  messageId: string | null;
  at: Date;
}

export interface SuppressionFilter {
  reason?: SuppressionReason | undefined;
  /** Lower-case text the email must contain. */
  q?: string | undefined;
  /** A complete normalized address: also matches its hash-only (erased) row. */
  exact?: string | undefined;
}

/** The hash every suppression and contact is matched by, computed in SQL exactly as the tables' triggers compute it. */
const hashOf = (db: Queryable, email: string) => db`sha256(convert_to(${email}::text, 'UTF8'))`;

const columns = (db: Queryable) => db`id, tenant_id, email, reason, source, detail, message_id, created_at`;

/** LIKE treats % and _ as wildcards; a search for them means the characters themselves. */
function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const filtered = (db: Queryable, f: SuppressionFilter) =>
  db`${f.reason ? db`and reason = ${f.reason}` : db``} ${
    f.q && f.exact ? db`and (email like ${likeContains(f.q)} or email_hash = ${hashOf(db, f.exact)})` : f.q ? db`and email like ${likeContains(f.q)}` : db``
  }`;

/** Inserts a row; a second row for the same address is a unique violation (SUPPRESSION_EMAIL_KEY or SUPPRESSION_HASH_KEY). */
export async function insertSuppression(db: Queryable, s: NewSuppression): Promise<SuppressionRow> {
  const [row] = await db<SuppressionRow[]>`
    insert into suppressions (tenant_id, email, reason, source, detail, message_id, created_at)
    values (${s.tenantId}, ${s.email}, ${s.reason}, ${s.source}, ${s.detail}, ${s.messageId}, ${s.at})
    returning ${columns(db)}`;
  return row!;
}

/** Inserts a row unless the address is already suppressed; the existing row is left as it was. */
export async function insertSuppressionIfAbsent(db: Queryable, s: NewSuppression): Promise<SuppressionRow | undefined> {
  const [row] = await db<SuppressionRow[]>`
    insert into suppressions (tenant_id, email, reason, source, detail, message_id, created_at)
    values (${s.tenantId}, ${s.email}, ${s.reason}, ${s.source}, ${s.detail}, ${s.messageId}, ${s.at})
    on conflict (tenant_id, email_hash) do nothing
    returning ${columns(db)}`;
  return row;
}

/** Inserts many distinct addresses in one statement; returns the rows that were new. */
export async function insertManyIfAbsent(
  db: Queryable,
  tenantId: string,
  emails: string[],
  s: { reason: SuppressionReason; source: SuppressionSource; at: Date },
): Promise<{ id: string; email: string }[]> {
  if (emails.length === 0) return [];
  return db<{ id: string; email: string }[]>`
    insert into suppressions (tenant_id, email, reason, source, created_at)
    select ${tenantId}, e, ${s.reason}, ${s.source}, ${s.at} from unnest(${emails}::text[]) as e
    on conflict (tenant_id, email_hash) do nothing
    returning id, email`;
}

/** The entries of these addresses, by hash (an erased person's hash-only entry included), each with the address asked about. */
export async function findSuppressionsByEmail(db: Queryable, tenantId: string, emails: string[]): Promise<{ id: string; email: string }[]> {
  if (emails.length === 0) return [];
  return db<{ id: string; email: string }[]>`
    select s.id, q.email from unnest(${emails}::text[]) as q(email)
    join suppressions s on s.tenant_id = ${tenantId} and s.email_hash = sha256(convert_to(q.email, 'UTF8'))`;
}

/**
 * Which of these (tenant, address) pairs must not be mailed, in one query for all: keys `${tenantId} ${email}`.
 * Refused: an address on the tenant's suppression list (matched by hash, so an erased person's hash-only
 * entry counts) and an address of a contact of the tenant whose status is unsubscribed. Both probes are
 * unique-index look-ups ((tenant_id, email_hash) on suppressions and on contacts).
 */
export async function suppressedAmong(db: Queryable, pairs: readonly { tenantId: string; email: string }[]): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const rows = await db<{ tenant_id: string; email: string }[]>`
    select q.tenant_id, q.email
    from unnest(${pairs.map((p) => p.tenantId)}::uuid[], ${pairs.map((p) => p.email)}::text[]) as q(tenant_id, email)
    cross join lateral (select sha256(convert_to(q.email, 'UTF8')) as hash) h
    where exists (select 1 from suppressions s where s.tenant_id = q.tenant_id and s.email_hash = h.hash)
       or exists (select 1 from contacts c where c.tenant_id = q.tenant_id and c.email_hash = h.hash and c.status = 'unsubscribed')`;
  return new Set(rows.map((r) => `${r.tenant_id} ${r.email}`));
}

export async function findSuppression(db: Queryable, tenantId: string, id: string): Promise<SuppressionRow | undefined> {
  const [row] = await db<SuppressionRow[]>`select ${columns(db)} from suppressions where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

/** A page of a tenant's suppressions, newest first, after a (created_at, id) keyset position. */
export async function listSuppressions(
  db: Queryable,
  tenantId: string,
  filter: SuppressionFilter,
  page: { limit: number; after?: { at: Date; id: string } | undefined },
): Promise<SuppressionRow[]> {
  const after = page.after;
  return db<SuppressionRow[]>`
    select ${columns(db)} from suppressions
    where tenant_id = ${tenantId} ${filtered(db, filter)}
      ${after ? db`and (created_at, id) < (${after.at}, ${after.id})` : db``}
    order by created_at desc, id desc
    limit ${page.limit}`;
}

export async function countSuppressions(db: Queryable, tenantId: string, filter: SuppressionFilter): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from suppressions where tenant_id = ${tenantId} ${filtered(db, filter)}`;
  return row!.n;
}

export async function deleteSuppression(db: Queryable, tenantId: string, id: string): Promise<SuppressionRow | undefined> {
  const [row] = await db<SuppressionRow[]>`
    delete from suppressions where tenant_id = ${tenantId} and id = ${id} returning ${columns(db)}`;
  return row;
}

/** Whether `email` is the address a (possibly hash-only) entry was made for. */
export async function suppressionHashMatches(db: Queryable, tenantId: string, id: string, email: string): Promise<boolean> {
  const [row] = await db<{ found: boolean }[]>`
    select exists (select 1 from suppressions where tenant_id = ${tenantId} and id = ${id} and email_hash = ${hashOf(db, email)}) as found`;
  return row!.found;
}

/**
 * A contact erasure: the address's entry (whatever its reason) becomes hash-only (`erased`, nothing but the
 * hash and its first date kept), or a hash-only entry is added, so the person stays suppressed.
 */
export async function eraseSuppression(db: Queryable, tenantId: string, emailHash: Buffer, at: Date): Promise<void> {
  const converted = await db`
    update suppressions set email = null, reason = 'erased', source = 'erasure', detail = null, message_id = null
    where tenant_id = ${tenantId} and email_hash = ${emailHash} returning id`;
  if (converted.length > 0) return;
  await db`
    insert into suppressions (tenant_id, email, email_hash, reason, source, created_at)
    values (${tenantId}, null, ${emailHash}, 'erased', 'erasure', ${at})
    on conflict (tenant_id, email_hash) do nothing`;
}
