// Runs an import job: streams the stored file back in order, checks each row, and commits batches until the file ends, the slice of time is used up, or the
// process stops; a rerun resumes after the committed rows.
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import { listCustomFields } from '../custom-fields/queries.js';
import type { Sql } from '../../db/connection.js';
import type { Boss } from '../../jobs/boss.js';
import type { Logger } from '../../kernel/log.js';
import { Superseded, writeBatch, type BatchContext, type BatchEnd } from './batch.js';
import { planColumns, type ColumnPlan } from './columns.js';
import { csvRecords, FileError } from './csv-source.js';
import { ndjsonRecords } from './ndjson-source.js';
import { findImportById, markFailed, markRunning, readChunk, type ImportFormat } from './queries.js';
import { checkCsvRow, checkJsonRow, type CheckedRow } from './rows.js';
import { listExists } from './upsert.js';

export interface ImportDeps {
  sql: Sql;
  boss: Boss;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'limits'>;
}

export type RunOutcome = 'completed' | 'failed' | 'continued' | 'superseded' | 'nothing';

/** The stored chunks in order, one query each: at most one chunk in memory here. */
async function* storedChunks(sql: Sql, importId: string, count: number): AsyncGenerator<Buffer> {
  for (let seq = 0; seq < count; seq++) {
    const data = await readChunk(sql, importId, seq);
    if (!data) throw new Error(`import ${importId}: chunk ${seq} of ${count} is missing`);
    yield data;
  }
}

/** Checked rows of the file in order (header handled), or a per-file error string as the first item. */
async function* checkedRows(deps: ImportDeps, ctx: BatchContext, format: ImportFormat, chunkCount: number): AsyncGenerator<CheckedRow | { fileError: string }> {
  const limits = deps.config.limits.imports;
  const chunks = storedChunks(deps.sql, ctx.importId, chunkCount);
  const catalogKeys = new Set(ctx.catalog.map((f) => f.key));
  if (format === 'csv') {
    let plan: ColumnPlan | undefined;
    for await (const item of csvRecords(chunks, { delimiter: ctx.options.delimiter, maxRecordBytes: limits.max_record_bytes })) {
      if ('header' in item) {
        const resolved = planColumns(item.header, ctx.options.mapping, catalogKeys);
        if (typeof resolved === 'string') {
          yield { fileError: resolved };
          return;
        }
        plan = resolved;
        continue;
      }
      yield item.error !== undefined ? { ok: false, line: item.line, reason: item.error } : checkCsvRow(plan!, ctx.catalog, item.line, item.cells);
    }
    if (!plan) yield { fileError: 'the file is empty: a CSV import needs a header line naming its columns' };
    return;
  }
  let any = false;
  for await (const item of ndjsonRecords(chunks, { maxRecordBytes: limits.max_record_bytes })) {
    any = true;
    yield item.error !== undefined
      ? { ok: false, line: item.line, reason: item.error }
      : checkJsonRow(ctx.options.mapping, ctx.catalog, catalogKeys, item.line, item.value);
  }
  if (!any) yield { fileError: 'the file is empty: an NDJSON import needs one JSON object per line' };
}

/**
 * Runs (or resumes) one import. Batches are written one after the other while the next is parsed; each commits its
 * rows with the progress, so a crash loses nothing committed and a rerun skips exactly the committed records.
 */
export async function runImport(deps: ImportDeps, importId: string, control: { stopping(): boolean } = { stopping: () => false }): Promise<RunOutcome> {
  const started = deps.clock.now().getTime();
  const row = await findImportById(deps.sql, importId);
  if (!row || (row.status !== 'queued' && row.status !== 'running')) return 'nothing';
  if (!(await markRunning(deps.sql, importId, deps.clock.now()))) return 'nothing';
  const log = deps.log.child({ importId, tenantId: row.tenant_id });
  const ctx: BatchContext = {
    sql: deps.sql,
    boss: deps.boss,
    importId,
    tenantId: row.tenant_id,
    options: row.options,
    catalog: await listCustomFields(deps.sql, row.tenant_id),
  };
  if (row.options.list_id && !(await listExists(deps.sql, row.tenant_id, row.options.list_id))) {
    await markFailed(deps.sql, importId, `the list ${row.options.list_id} no longer exists`, deps.clock.now());
    return 'failed';
  }
  const limits = deps.config.limits.imports;
  const sliceEnds = started + limits.slice_seconds * 1000;
  let done = row.rows_done;
  let seen = 0;
  let batch: CheckedRow[] = [];
  let pending: Promise<unknown> | undefined;

  /** Commits the batch in hand after the one in flight; `done` counts rows committed or in flight. */
  const flush = async (end: BatchEnd) => {
    if (pending) await pending;
    const rows = batch;
    batch = [];
    const from = done;
    done += rows.length;
    const write = writeBatch(ctx, from, rows, end, deps.clock.now());
    // Awaited before the next batch (or at the end); until then a failure must not count as unhandled.
    write.catch(() => undefined);
    pending = write;
    if (end.kind !== 'more') await write;
  };

  try {
    for await (const item of checkedRows(deps, ctx, row.format, row.chunks)) {
      if ('fileError' in item) {
        await flush({ kind: 'fail', error: item.fileError });
        return 'failed';
      }
      seen++;
      // Records committed by an earlier run are skipped by number: the file and its parsing never change.
      if (seen <= row.rows_done) continue;
      batch.push(item);
      if (batch.length >= limits.batch_size) {
        if (control.stopping() || deps.clock.now().getTime() >= sliceEnds) {
          await flush({ kind: 'continue' });
          log.info({ rowsDone: done }, 'import continues in a new job');
          return 'continued';
        }
        await flush({ kind: 'more' });
      }
    }
    await flush({ kind: 'complete', rowsTotal: seen });
    log.info({ rows: seen }, 'import completed');
    return 'completed';
  } catch (err) {
    if (err instanceof FileError) {
      // The rows before the unreadable place are in the batch in hand: committed with the failure.
      try {
        await flush({ kind: 'fail', error: `${err.message}; the ${done + batch.length} row(s) before it were processed` });
      } catch (flushErr) {
        if (flushErr instanceof Superseded) return 'superseded';
        throw flushErr;
      }
      return 'failed';
    }
    if (pending) await pending.catch(() => undefined);
    if (err instanceof Superseded) {
      log.info('import moved on by another worker; this run stops');
      return 'superseded';
    }
    throw err;
  }
}
