// SQL for the per-tenant suppression list. Every query is scoped to its tenant; emails arrive already normalized.
import type { Queryable } from '../db/connection.js';

export const SUPPRESSION_REASONS = ['hard_bounce', 'complaint', 'unsubscribe', 'manual', 'spam_trap'] as const;
export type SuppressionReason = (typeof SUPPRESSION_REASONS)[number];

export const SUPPRESSION_SOURCES = ['api', 'bounce', 'complaint', 'unsubscribe-link'] as const;
export type SuppressionSource = (typeof SUPPRESSION_SOURCES)[number];

export interface SuppressionRow {
  id: string;
  tenant_id: string;
  email: string;
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
}

const columns = (db: Queryable) => db`id, tenant_id, email, reason, source, detail, message_id, created_at`;

/** LIKE treats % and _ as wildcards; a search for them means the characters themselves. */
function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const filtered = (db: Queryable, f: SuppressionFilter) =>
  db`${f.reason ? db`and reason = ${f.reason}` : db``} ${f.q ? db`and email like ${likeContains(f.q)}` : db``}`;

/** Inserts a row; a second row for the same address is a unique violation (suppressions_tenant_email_key). */
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
    on conflict on constraint suppressions_tenant_email_key do nothing
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
    on conflict on constraint suppressions_tenant_email_key do nothing
    returning id, email`;
}

export async function findSuppressionsByEmail(db: Queryable, tenantId: string, emails: string[]): Promise<{ id: string; email: string }[]> {
  if (emails.length === 0) return [];
  return db<{ id: string; email: string }[]>`
    select id, email from suppressions where tenant_id = ${tenantId} and email = any(${emails}::text[])`;
}

/** One probe of the unique index: the send gate calls this for every recipient. */
export async function suppressionExists(db: Queryable, tenantId: string, email: string): Promise<boolean> {
  const [row] = await db<{ found: boolean }[]>`
    select exists (select 1 from suppressions where tenant_id = ${tenantId} and email = ${email}) as found`;
  return row!.found;
}

/** Which of these (tenant, address) pairs are suppressed, in one probe for all: keys `${tenantId} ${email}`. */
export async function suppressedAmong(db: Queryable, pairs: readonly { tenantId: string; email: string }[]): Promise<Set<string>> {
  if (pairs.length === 0) return new Set();
  const rows = await db<{ tenant_id: string; email: string }[]>`
    select s.tenant_id, s.email from suppressions s
    join unnest(${pairs.map((p) => p.tenantId)}::uuid[], ${pairs.map((p) => p.email)}::text[]) as q(tenant_id, email)
      on s.tenant_id = q.tenant_id and s.email = q.email`;
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
