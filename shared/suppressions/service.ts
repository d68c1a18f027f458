// The per-tenant suppression list: API operations (list, read, add, bulk add, remove) and the two calls the mail pipeline makes.
import type { AuditActor } from '../audit/log.js';
import { writeAudit } from '../audit/log.js';
import type { Clock } from '../clock.js';
import { decodeCursor, pageOf } from '../cursor.js';
import type { Queryable, Sql } from '../db/connection.js';
import { parseDomainName } from '../domains/names.js';
import { AppError, conflict, isUniqueViolation, notFound, validationError } from '../errors.js';
import { isUuid } from '../ids.js';
import {
  countSuppressions,
  deleteSuppression,
  findSuppression,
  findSuppressionsByEmail,
  insertManyIfAbsent,
  insertSuppression,
  insertSuppressionIfAbsent,
  listSuppressions,
  suppressionExists,
  type SuppressionReason,
  type SuppressionRow,
  type SuppressionSource,
} from './queries.js';

export interface SuppressionDeps {
  sql: Sql;
  clock: Clock;
}

/** RFC 5322 dot-atom: quoted local parts and comments are legal but never worth accepting here. */
const LOCAL_PART = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/i;

/**
 * Checks an address and returns the form the list stores: trimmed, lower-cased, domain in IDNA (ASCII) form.
 * Throws 422 naming `field`. Line breaks are refused rather than trimmed: they are a header-injection attempt.
 */
export function normalizeEmail(input: string, field = 'email'): string {
  if (/[\r\n\u0085\u2028\u2029]/.test(input)) throw validationError(field, 'must not contain line breaks');
  // Only spaces and tabs are trimmed: any other invisible character is refused below, wherever it is.
  const text = input.replace(/^[ \t]+|[ \t]+$/g, '');
  if (text === '') throw validationError(field, 'must be an email address');
  if (text.length > 254) throw validationError(field, 'is longer than 254 characters');
  if (/[\s\p{Cc}\p{Cf}]/u.test(text)) throw validationError(field, 'must not contain spaces, control or invisible characters');
  const parts = text.split('@');
  if (parts.length !== 2 || !parts[0] || !parts[1]) throw validationError(field, 'must be one address of the form local@domain');
  const [local, domain] = parts as [string, string];
  if (local.length > 64) throw validationError(field, 'has a local part (before @) longer than 64 characters');
  if (!LOCAL_PART.test(local)) throw validationError(field, 'has an invalid local part (before @): ASCII letters, digits and !#$%&\'*+/=?^_`{|}~.- only, no leading, trailing or double dots');
  if (domain.endsWith('.')) throw validationError(`${field} domain`, 'must not end with a dot');
  const ascii = parseDomainName(domain, [], `${field} domain`).ascii;
  const email = `${local.toLowerCase()}@${ascii}`;
  if (email.length > 254) throw validationError(field, 'is longer than 254 characters');
  return email;
}

/** Whether mail to the address must be dropped: one probe of the unique index. An invalid address is never on the list. */
export async function isSuppressed(db: Queryable, tenantId: string, email: string): Promise<boolean> {
  let key: string;
  try {
    key = normalizeEmail(email);
  } catch {
    return false;
  }
  return suppressionExists(db, tenantId, key);
}

export interface SuppressInput {
  email: string;
  reason: SuppressionReason;
  source: SuppressionSource;
  detail?: string | null;
  messageId?: string | null;
  at: Date;
}

/**
 * Adds an automatic entry (hard bounce, complaint, unsubscribe). An address already on the list keeps its
 * first row, so the original reason survives; returns whether a row was added. Throws 422 for an invalid address.
 */
export async function suppress(db: Queryable, tenantId: string, s: SuppressInput): Promise<boolean> {
  const row = await insertSuppressionIfAbsent(db, {
    tenantId,
    email: normalizeEmail(s.email),
    reason: s.reason,
    source: s.source,
    detail: s.detail ?? null,
    messageId: s.messageId ?? null,
    at: s.at,
  });
  return row !== undefined;
}

export async function getSuppression(deps: SuppressionDeps, tenantId: string, id: string): Promise<SuppressionRow> {
  const row = isUuid(id) ? await findSuppression(deps.sql, tenantId, id) : undefined;
  if (!row) throw notFound('suppression');
  return row;
}

export async function listSuppressionPage(
  deps: SuppressionDeps,
  tenantId: string,
  query: { limit: number; after?: string | undefined; reason?: SuppressionReason | undefined; q?: string | undefined },
): Promise<{ items: SuppressionRow[]; next_cursor: string | null; total: number }> {
  const after = query.after ? decodeCursor(query.after) : undefined;
  // Stored addresses are lower case, so a lower-cased search is case-insensitive.
  const filter = { reason: query.reason, q: query.q?.trim().toLowerCase() || undefined };
  const rows = await listSuppressions(deps.sql, tenantId, filter, { limit: query.limit + 1, after });
  return { ...pageOf(rows, query.limit), total: await countSuppressions(deps.sql, tenantId, filter) };
}

/** A manual entry from the API; 409 when the address is already suppressed. */
export async function addSuppression(
  deps: SuppressionDeps,
  tenantId: string,
  actor: AuditActor,
  input: { email: string; reason: SuppressionReason },
): Promise<SuppressionRow> {
  const email = normalizeEmail(input.email);
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      const row = await insertSuppression(tx, { tenantId, email, reason: input.reason, source: 'api', detail: null, messageId: null, at });
      await writeAudit(tx, {
        tenantId, actor, action: 'suppression.added', resourceType: 'suppression', resourceId: row.id,
        metadata: { email, reason: row.reason, source: row.source }, at,
      });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, 'suppressions_tenant_email_key')) throw conflict(`${email} is already suppressed`);
    throw err;
  }
}

export type BulkStatus = 'added' | 'already_suppressed' | 'invalid';

export interface BulkRow {
  /** The address as sent. */
  input: string;
  /** The stored form; null when invalid. */
  email: string | null;
  status: BulkStatus;
  id: string | null;
  message: string | null;
}

/**
 * Adds many addresses at once; each row gets its own outcome (a bad address never fails the batch).
 * A repeat of an address within the batch counts as already suppressed. One audit row covers the batch.
 */
export async function addSuppressions(
  deps: SuppressionDeps,
  tenantId: string,
  actor: AuditActor,
  input: { emails: string[]; reason: SuppressionReason },
): Promise<{ results: BulkRow[]; totals: Record<BulkStatus, number> }> {
  const rows: BulkRow[] = input.emails.map((raw, i) => {
    try {
      return { input: raw, email: normalizeEmail(raw, `emails.${i}`), status: 'already_suppressed', id: null, message: null };
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      return { input: raw, email: null, status: 'invalid', id: null, message: err.message };
    }
  });
  const distinct = [...new Set(rows.flatMap((r) => (r.email ? [r.email] : [])))];
  const at = deps.clock.now();
  const { added, existing } = await deps.sql.begin(async (tx) => {
    const added = await insertManyIfAbsent(tx, tenantId, distinct, { reason: input.reason, source: 'api', at });
    const fresh = new Set(added.map((a) => a.email));
    const existing = await findSuppressionsByEmail(tx, tenantId, distinct.filter((e) => !fresh.has(e)));
    if (added.length > 0) {
      await writeAudit(tx, {
        tenantId, actor, action: 'suppression.added', resourceType: 'suppression',
        metadata: { bulk: true, reason: input.reason, source: 'api', count: added.length, emails: added.map((a) => a.email) }, at,
      });
    }
    return { added, existing };
  });
  const addedIds = new Map(added.map((a) => [a.email, a.id]));
  const existingIds = new Map(existing.map((e) => [e.email, e.id]));
  for (const row of rows) {
    if (!row.email) continue;
    const newId = addedIds.get(row.email);
    if (newId !== undefined) {
      // Only the first occurrence is the one that added it.
      row.status = 'added';
      row.id = newId;
      addedIds.delete(row.email);
      existingIds.set(row.email, newId);
    } else {
      row.id = existingIds.get(row.email) ?? null;
    }
  }
  const totals = { added: 0, already_suppressed: 0, invalid: 0 };
  for (const row of rows) totals[row.status]++;
  return { results: rows, totals };
}

/** Removes an address from the list: mail to it is sent again. */
export async function removeSuppression(deps: SuppressionDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('suppression');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const row = await deleteSuppression(tx, tenantId, id);
    if (!row) throw notFound('suppression');
    await writeAudit(tx, {
      tenantId, actor, action: 'suppression.removed', resourceType: 'suppression', resourceId: id,
      metadata: { email: row.email, reason: row.reason, source: row.source }, at,
    });
  });
}
