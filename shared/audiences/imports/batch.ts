// Commits one batch of an import in one transaction: its contacts and list memberships, its row errors, the progress counters, and what comes next
// (completion, failure or a continuation job).
import { findContactsByEmails } from '../contacts/queries.js';
import type { FieldDefinition } from '../custom-fields/values.js';
import type { Queryable, Sql } from '../../db/connection.js';
import type { Boss } from '../../jobs/boss.js';
import { enqueueImport } from './jobs.js';
import type { ImportOptions } from './options.js';
import { addProgress, insertRowErrors, lockProgress, markCompleted, markFailed, type RowError } from './queries.js';
import type { CheckedRow, ImportWrite } from './rows.js';
import { addListMembers, listExists, liveAddresses, shapeKey, shapeOf, upsertRows, type UpsertCounts } from './upsert.js';

/** Another worker moved the import on (or it finished): this one stops without writing. */
export class Superseded extends Error {
  override name = 'Superseded';
}

export interface BatchContext {
  sql: Sql;
  boss: Boss;
  importId: string;
  tenantId: string;
  options: ImportOptions;
  catalog: readonly FieldDefinition[];
}

/** What the batch's transaction also does: nothing more, complete the import, fail it, or queue its continuation. */
export type BatchEnd = { kind: 'more' } | { kind: 'complete'; rowsTotal: number } | { kind: 'fail'; error: string } | { kind: 'continue' };

/**
 * The rows in rounds so that no statement holds an address twice: the nth occurrence of an address goes to round n,
 * and rounds run in order, so a file is applied as if row by row (a later repeat updates or is skipped).
 */
function rounds(rows: ImportWrite[]): ImportWrite[][] {
  const seen = new Map<string, number>();
  const out: ImportWrite[][] = [];
  for (const row of rows) {
    const n = seen.get(row.email) ?? 0;
    seen.set(row.email, n + 1);
    (out[n] ??= []).push(row);
  }
  return out;
}

/** Required custom fields bind new contacts only: rows that would create one without them are invalid. */
async function checkRequired(ctx: BatchContext, tx: Queryable, valid: ImportWrite[], errors: RowError[]): Promise<ImportWrite[]> {
  const required = ctx.catalog.filter((f) => f.required).map((f) => f.key);
  if (required.length === 0 || valid.length === 0) return valid;
  const live = await liveAddresses(tx, ctx.tenantId, [...new Set(valid.map((r) => r.email))]);
  const kept: ImportWrite[] = [];
  for (const row of valid) {
    const missing = live.has(row.email) ? undefined : required.find((key) => !(key in row.set));
    if (missing !== undefined) {
      errors.push({ line: row.line, reason: `custom_fields.${missing}: is required` });
      continue;
    }
    // Once made, a repeat later in the file updates it.
    live.add(row.email);
    kept.push(row);
  }
  return kept;
}

/**
 * Consent is not undone by a file: a row asking an unsubscribed contact to be active is reported as invalid and not
 * applied (re-subscribing is an explicit, audited action). A row unsubscribing earlier in the same file is caught by
 * the upsert itself, which never re-subscribes.
 */
async function refuseResubscribes(ctx: BatchContext, tx: Queryable, valid: ImportWrite[], errors: RowError[]): Promise<ImportWrite[]> {
  const asking = [...new Set(valid.filter((r) => r.status === 'active').map((r) => r.email))];
  if (asking.length === 0) return valid;
  const unsubscribed = new Map((await findContactsByEmails(tx, ctx.tenantId, asking)).filter((c) => c.status === 'unsubscribed').map((c) => [c.email, c.id]));
  if (unsubscribed.size === 0) return valid;
  return valid.filter((row) => {
    const id = row.status === 'active' ? unsubscribed.get(row.email) : undefined;
    if (id === undefined) return true;
    errors.push({
      line: row.line,
      reason: `status: ${row.email} is unsubscribed; an import never re-subscribes (POST /contacts/${id}/resubscribe with a reason does)`,
    });
    return false;
  });
}

/**
 * Writes `rows` (the records after `rowsDone`, in order) and advances the progress, all or nothing. Throws
 * Superseded when the import's rows_done is no longer `rowsDone` (another worker wrote this batch) or it is not running.
 */
export async function writeBatch(
  ctx: BatchContext,
  rowsDone: number,
  rows: CheckedRow[],
  end: BatchEnd,
  at: Date,
): Promise<UpsertCounts & { invalid: number }> {
  return ctx.sql.begin(async (tx) => {
    // The commit does not wait for its WAL flush: a PostgreSQL crash may lose the last batches, but each with its
    // progress (the rerun applies them again), and anything later that is flushed (the job's completion) flushes them too.
    await tx`set local synchronous_commit = off`;
    const progress = await lockProgress(tx, ctx.importId);
    if (!progress || progress.status !== 'running' || progress.rows_done !== rowsDone) throw new Superseded('the import was moved on by another worker');
    const listId = ctx.options.list_id;
    if (listId && !(await listExists(tx, ctx.tenantId, listId, { lock: true }))) {
      await markFailed(tx, ctx.importId, `the list ${listId} was deleted during the import; rows before record ${rowsDone + 1} were imported`, at);
      return { inserted: 0, updated: 0, skipped: 0, invalid: 0 };
    }
    const errors: RowError[] = rows.flatMap((r) => (r.ok ? [] : [{ line: r.line, reason: r.reason }]));
    const valid = await refuseResubscribes(
      ctx,
      tx,
      await checkRequired(
        ctx,
        tx,
        rows.flatMap((r) => (r.ok ? [r.row] : [])),
        errors,
      ),
      errors,
    );
    const counts: UpsertCounts = { inserted: 0, updated: 0, skipped: 0 };
    for (const round of rounds(valid)) {
      const groups = new Map<string, ImportWrite[]>();
      for (const row of round) {
        const key = shapeKey(shapeOf(row));
        const group = groups.get(key);
        if (group) group.push(row);
        else groups.set(key, [row]);
      }
      for (const group of groups.values()) {
        const c = await upsertRows(tx, ctx.tenantId, shapeOf(group[0]!), group, { onExisting: ctx.options.on_existing, at });
        counts.inserted += c.inserted;
        counts.updated += c.updated;
        counts.skipped += c.skipped;
      }
    }
    if (listId) await addListMembers(tx, ctx.tenantId, listId, [...new Set(valid.map((r) => r.email))], at);
    await insertRowErrors(tx, ctx.importId, errors);
    await addProgress(tx, ctx.importId, { rows: rows.length, ...counts, invalid: errors.length });
    if (end.kind === 'complete') await markCompleted(tx, ctx.importId, end.rowsTotal, at);
    else if (end.kind === 'fail') await markFailed(tx, ctx.importId, end.error, at);
    else if (end.kind === 'continue') await enqueueImport(ctx.boss, tx, { import_id: ctx.importId });
    return { ...counts, invalid: errors.length };
  });
}
