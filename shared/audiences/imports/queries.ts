// SQL for bulk contact imports: the import row and its progress, the uploaded file's chunks, and the row errors. Scoped to a tenant wherever a client names
// an import.
import type { Queryable, Sql } from '../../db/connection.js';
import type { KeysetPosition } from '../../kernel/cursor.js';
import type { ImportOptions } from './options.js';

export const IMPORT_STATUSES = ['uploading', 'queued', 'running', 'completed', 'failed'] as const;
export type ImportStatus = (typeof IMPORT_STATUSES)[number];
export type ImportFormat = 'csv' | 'json';

export interface ImportRow {
  id: string;
  tenant_id: string;
  api_key_id: string | null;
  format: ImportFormat;
  options: ImportOptions;
  status: ImportStatus;
  bytes: number;
  chunks: number;
  rows_total: number | null;
  rows_done: number;
  inserted: number;
  updated: number;
  skipped: number;
  invalid: number;
  error: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

// bigint counters come back as strings from postgres.js: read them as numbers (far below 2^53).
const selectColumns = (db: Queryable) =>
  db`id, tenant_id, api_key_id, format, options, status, bytes::float8 as bytes, chunks, rows_total::float8 as rows_total,
     rows_done::float8 as rows_done, inserted::float8 as inserted, updated::float8 as updated, skipped::float8 as skipped,
     invalid::float8 as invalid, error, created_at, started_at, finished_at`;

export async function insertImport(
  db: Queryable,
  i: { tenantId: string; apiKeyId: string | null; format: ImportFormat; options: ImportOptions; at: Date },
): Promise<ImportRow> {
  const [row] = await db<ImportRow[]>`
    insert into contact_imports (tenant_id, api_key_id, format, options, status, created_at)
    values (${i.tenantId}, ${i.apiKeyId}, ${i.format}, ${db.json(i.options as never)}, 'uploading', ${i.at})
    returning ${selectColumns(db)}`;
  return row!;
}

/**
 * A new import of the tenant, unless it already has `cap` in progress (uploading, queued or running): then
 * undefined. Concurrent uploads of one tenant are counted one after the other (a lock per tenant).
 */
export async function insertImportWithinCap(
  sql: Sql,
  i: { tenantId: string; apiKeyId: string | null; format: ImportFormat; options: ImportOptions; at: Date },
  cap: number,
): Promise<ImportRow | undefined> {
  return (await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`contact-imports:${i.tenantId}`}))`;
    const [busy] = await tx<{ n: number }[]>`
      select count(*)::int as n from contact_imports where tenant_id = ${i.tenantId} and status in ('uploading', 'queued', 'running')`;
    return busy!.n >= cap ? undefined : insertImport(tx, i);
  })) as ImportRow | undefined;
}

export async function insertChunk(db: Queryable, importId: string, seq: number, data: Buffer): Promise<void> {
  await db`insert into contact_import_chunks (import_id, seq, data) values (${importId}, ${seq}, ${data})`;
}

/** The whole file is stored: the import waits for its job. False when it is no longer uploading. */
export async function markQueued(db: Queryable, importId: string, bytes: number, chunks: number): Promise<boolean> {
  const rows = await db`
    update contact_imports set status = 'queued', bytes = ${bytes}, chunks = ${chunks}
    where id = ${importId} and status = 'uploading' returning id`;
  return rows.length > 0;
}

/** An upload that did not arrive in full: failed with the reason, its chunks dropped. */
export async function failUpload(db: Queryable, importId: string, bytes: number, error: string, at: Date): Promise<void> {
  await db`delete from contact_import_chunks where import_id = ${importId}`;
  await db`
    update contact_imports set status = 'failed', bytes = ${bytes}, chunks = 0, error = ${error}, finished_at = ${at}
    where id = ${importId} and status = 'uploading'`;
}

/**
 * Uploads left 'uploading' by a process that died mid-upload (older than the upload deadline): failed, chunks dropped.
 * Returns how many.
 */
export async function failStaleUploads(db: Queryable, olderThan: Date, at: Date): Promise<number> {
  const stale = await db<{ id: string }[]>`
    update contact_imports set status = 'failed', error = 'the upload was interrupted (the API process stopped)', finished_at = ${at}
    where status = 'uploading' and created_at < ${olderThan} returning id`;
  if (stale.length > 0) await db`delete from contact_import_chunks where import_id = any(${stale.map((s) => s.id)}::uuid[])`;
  return stale.length;
}

export async function findImport(db: Queryable, tenantId: string, id: string): Promise<ImportRow | undefined> {
  const [row] = await db<ImportRow[]>`select ${selectColumns(db)} from contact_imports where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

/** For the worker, which knows only the import's id (from its job). */
export async function findImportById(db: Queryable, id: string): Promise<ImportRow | undefined> {
  const [row] = await db<ImportRow[]>`select ${selectColumns(db)} from contact_imports where id = ${id}`;
  return row;
}

/** A page of a tenant's imports, newest first. */
export async function listImports(db: Queryable, tenantId: string, page: { limit: number; after?: KeysetPosition | undefined }): Promise<ImportRow[]> {
  const after = page.after ? db`and (created_at, id) < (${page.after.at}, ${page.after.id})` : db``;
  return db<ImportRow[]>`
    select ${selectColumns(db)} from contact_imports where tenant_id = ${tenantId} ${after}
    order by created_at desc, id desc limit ${page.limit}`;
}

export async function countImports(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::float8 as n from contact_imports where tenant_id = ${tenantId}`;
  return row!.n;
}

/** One stored chunk of the file (undefined past the end). */
export async function readChunk(db: Queryable, importId: string, seq: number): Promise<Buffer | undefined> {
  const [row] = await db<{ data: Buffer }[]>`select data from contact_import_chunks where import_id = ${importId} and seq = ${seq}`;
  return row?.data;
}

/** queued (or running again after a crash) → running; false when the import is finished or not there. */
export async function markRunning(db: Queryable, id: string, at: Date): Promise<boolean> {
  const rows = await db`
    update contact_imports set status = 'running', started_at = coalesce(started_at, ${at})
    where id = ${id} and status in ('queued', 'running') returning id`;
  return rows.length > 0;
}

/**
 * Locks the import's row for a batch's transaction and answers its rows_done: the batch is written only if no
 * other worker moved the import on meanwhile (batches of one import are serialized by this lock).
 */
export async function lockProgress(db: Queryable, id: string): Promise<{ rows_done: number; status: ImportStatus } | undefined> {
  const [row] = await db<{ rows_done: number; status: ImportStatus }[]>`
    select rows_done::float8 as rows_done, status from contact_imports where id = ${id} for update`;
  return row;
}

export interface ProgressDelta {
  rows: number;
  inserted: number;
  updated: number;
  skipped: number;
  invalid: number;
}

export async function addProgress(db: Queryable, id: string, d: ProgressDelta): Promise<void> {
  await db`
    update contact_imports set rows_done = rows_done + ${d.rows}, inserted = inserted + ${d.inserted}, updated = updated + ${d.updated},
      skipped = skipped + ${d.skipped}, invalid = invalid + ${d.invalid}
    where id = ${id}`;
}

/** The file was read to its end: completed, with its row count; the chunks are no longer needed. */
export async function markCompleted(db: Queryable, id: string, rowsTotal: number, at: Date): Promise<void> {
  await db`update contact_imports set status = 'completed', rows_total = ${rowsTotal}, finished_at = ${at} where id = ${id}`;
  await db`delete from contact_import_chunks where import_id = ${id}`;
}

/** A file-level failure: the rows committed before it stay, and the import says why it stopped. */
export async function markFailed(db: Queryable, id: string, error: string, at: Date): Promise<void> {
  await db`
    update contact_imports set status = 'failed', error = ${error}, finished_at = ${at}
    where id = ${id} and status in ('queued', 'running')`;
  await db`delete from contact_import_chunks where import_id = ${id}`;
}

export interface RowError {
  line: number;
  reason: string;
}

/** A batch's invalid rows (a line already recorded by an earlier attempt is kept as it was). */
export async function insertRowErrors(db: Queryable, importId: string, errors: readonly RowError[]): Promise<void> {
  if (errors.length === 0) return;
  await db`
    insert into contact_import_errors (import_id, line, reason)
    select ${importId}, e.line, e.reason from unnest(${errors.map((e) => e.line)}::bigint[], ${errors.map((e) => e.reason)}::text[]) as e(line, reason)
    on conflict (import_id, line) do nothing`;
}

/** The first invalid rows, by line. */
export async function firstRowErrors(db: Queryable, importId: string, limit: number): Promise<RowError[]> {
  return db<RowError[]>`
    select line::float8 as line, reason from contact_import_errors where import_id = ${importId} order by line limit ${limit}`;
}

/** Invalid rows after `afterLine`, by line: pages for streaming them all. */
export async function rowErrorsAfter(db: Queryable, importId: string, afterLine: number, limit: number): Promise<RowError[]> {
  return db<RowError[]>`
    select line::float8 as line, reason from contact_import_errors where import_id = ${importId} and line > ${afterLine}
    order by line limit ${limit}`;
}
