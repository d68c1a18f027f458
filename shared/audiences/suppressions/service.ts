// The per-tenant suppression list: API operations (list, read, add, bulk add, remove) and the two calls the mail pipeline makes.
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { normalizeEmail } from '../../kernel/email.js';
import { AppError, conflict, isUniqueViolation, notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import {
  countSuppressions,
  deleteSuppression,
  findSuppression,
  findSuppressionsByEmail,
  insertManyIfAbsent,
  insertSuppression,
  insertSuppressionIfAbsent,
  listSuppressions,
  SUPPRESSION_EMAIL_KEY,
  SUPPRESSION_HASH_KEY,
  suppressedAmong,
  suppressionHashMatches,
  type SuppressionRow,
} from './queries.js';
import type { SuppressionReason, SuppressionSource } from './reasons.js';

export interface SuppressionDeps {
  sql: Sql;
  clock: Clock;
}

/** Addresses are normalized by shared/kernel/email.ts; re-exported for the modules that import it from here. */
export { normalizeEmail };

/**
 * Whether mail to the address must be dropped, by the same rule as the send gate (suppressedAmong): on the
 * suppression list (an erased person's hash-only entry included) or an unsubscribed contact. An invalid address is never.
 */
export async function isSuppressed(db: Queryable, tenantId: string, email: string): Promise<boolean> {
  let key: string;
  try {
    key = normalizeEmail(email);
  } catch {
    return false;
  }
  return (await suppressedAmong(db, [{ tenantId, email: key }])).size > 0;
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
  const q = query.q?.trim().toLowerCase() || undefined;
  // A complete address also finds its erased (hash-only) entry, which holds no text to match.
  const filter = { reason: query.reason, q, exact: q ? normalizedOrUndefined(q) : undefined };
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
        tenantId,
        actor,
        action: 'suppression.added',
        resourceType: 'suppression',
        resourceId: row.id,
        metadata: { email, reason: row.reason, source: row.source },
        at,
      });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, SUPPRESSION_EMAIL_KEY) || isUniqueViolation(err, SUPPRESSION_HASH_KEY)) throw conflict(`${email} is already suppressed`);
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
    const existing = await findSuppressionsByEmail(
      tx,
      tenantId,
      distinct.filter((e) => !fresh.has(e)),
    );
    if (added.length > 0) {
      await writeAudit(tx, {
        tenantId,
        actor,
        action: 'suppression.added',
        resourceType: 'suppression',
        metadata: { bulk: true, reason: input.reason, source: 'api', count: added.length, emails: added.map((a) => a.email) },
        at,
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

function normalizedOrUndefined(text: string): string | undefined {
  try {
    return normalizeEmail(text);
  } catch {
    return undefined;
  }
}

/**
 * Removes an address from the list: mail to it is sent again. An erased person's entry (hash-only) is
 * refused with 409 unless `confirmEmail` is the address it was made for: an erasure is never undone by
 * accident. When given for any entry, `confirmEmail` must be its address (422 otherwise).
 */
export async function removeSuppression(deps: SuppressionDeps, tenantId: string, actor: AuditActor, id: string, confirmEmail?: string): Promise<void> {
  if (!isUuid(id)) throw notFound('suppression');
  const confirm = confirmEmail === undefined ? undefined : normalizeEmail(confirmEmail);
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const found = await findSuppression(tx, tenantId, id);
    if (!found) throw notFound('suppression');
    if (confirm !== undefined && !(await suppressionHashMatches(tx, tenantId, id, confirm))) {
      throw new AppError('validation_error', 'email: is not the address of this suppression');
    }
    if (found.email === null && confirm === undefined) {
      throw conflict('this entry keeps an erased person suppressed; to lift it, repeat the request with ?email=<the address> (the address it was made for)');
    }
    const row = await deleteSuppression(tx, tenantId, id);
    if (!row) throw notFound('suppression');
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'suppression.removed',
      resourceType: 'suppression',
      resourceId: id,
      metadata: { email: row.email, reason: row.reason, source: row.source },
      at,
    });
  });
}
