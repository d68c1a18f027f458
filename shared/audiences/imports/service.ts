// Bulk contact imports for the API: start one by uploading its file (stored in chunks, then queued with its job in one transaction), read one with its first
// row errors, list a tenant's.
import type { Readable } from 'node:stream';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import { listCustomFields } from '../custom-fields/queries.js';
import type { Sql } from '../../db/connection.js';
import { AppError, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import type { Boss } from '../../jobs/boss.js';
import type { Logger } from '../../kernel/log.js';
import { enqueueImport } from './jobs.js';
import { mappedCustomKeys, type ImportOptions } from './options.js';
import {
  countImports,
  failUpload,
  findImport,
  firstRowErrors,
  insertChunk,
  insertImportWithinCap,
  listImports,
  markQueued,
  type ImportFormat,
  type ImportRow,
  type RowError,
} from './queries.js';
import { listExists } from './upsert.js';
import { fixedChunks, UploadFailure, uploadPieces } from './upload.js';

export interface ImportServiceDeps {
  sql: Sql;
  boss: Boss;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'limits'>;
}

/** Retry-After of an upload refused at the tenant's cap of imports in progress: an import takes a while. */
const IMPORT_RETRY_AFTER_SECONDS = 30;

/** How many invalid rows GET /contacts/imports/{id} shows (errors.csv has them all). */
export const ERRORS_SHOWN = 100;

/** The options are checked before a byte is stored: the list must be the tenant's, mapped custom fields in the catalog. */
async function checkOptions(deps: ImportServiceDeps, tenantId: string, options: ImportOptions): Promise<void> {
  if (options.list_id && !(await listExists(deps.sql, tenantId, options.list_id))) throw validationError('list_id', 'no such list');
  const keys = mappedCustomKeys(options.mapping);
  if (keys.length > 0) {
    const catalog = new Set((await listCustomFields(deps.sql, tenantId)).map((f) => f.key));
    const missing = keys.filter((k) => !catalog.has(k));
    if (missing.length > 0)
      throw validationError('mapping', `custom field(s) not in the catalog: ${missing.join(', ')} (define them under /contact-custom-fields)`);
  }
}

/**
 * Stores the body as the import's file, chunk by chunk while it arrives, then queues the import and its job in one
 * transaction. A tenant with imports.per_tenant_in_progress imports not yet finished is refused (429) before a
 * byte is read. An upload that does not arrive in full (too large, too slow, cut off) leaves a failed import without
 * chunks, and the UploadFailure's answer is thrown.
 */
export async function startImport(
  deps: ImportServiceDeps,
  input: { tenantId: string; apiKeyId: string | null; format: ImportFormat; options: ImportOptions; body: Readable },
): Promise<ImportRow> {
  await checkOptions(deps, input.tenantId, input.options);
  const limits = deps.config.limits.imports;
  const row = await insertImportWithinCap(deps.sql, { ...input, at: deps.clock.now() }, limits.per_tenant_in_progress);
  if (!row) {
    throw new AppError(
      'rate_limited',
      `this account already has ${limits.per_tenant_in_progress} imports in progress (uploading, queued or running): ` +
        'upload the next file once one has finished (GET /contacts/imports)',
      { headers: { 'Retry-After': String(IMPORT_RETRY_AFTER_SECONDS) } },
    );
  }
  let bytes = 0;
  let chunks = 0;
  try {
    const pieces = uploadPieces(input.body, {
      maxBytes: limits.max_file_bytes,
      timeoutMs: limits.upload_timeout_ms,
      idleTimeoutMs: limits.upload_idle_timeout_ms,
    });
    for await (const chunk of fixedChunks(pieces, limits.chunk_bytes)) {
      await insertChunk(deps.sql, row.id, chunks, chunk);
      chunks++;
      bytes += chunk.length;
    }
  } catch (err) {
    const reason = err instanceof UploadFailure ? err.message : `the upload failed after ${bytes} bytes`;
    await failUpload(deps.sql, row.id, bytes, reason, deps.clock.now()).catch((failErr: unknown) =>
      deps.log.error({ err: failErr, importId: row.id }, 'could not mark an interrupted upload failed'),
    );
    deps.log.info({ importId: row.id, bytes, reason }, 'import upload did not complete');
    throw err instanceof UploadFailure ? err.answer : err;
  }
  const queued = await deps.sql.begin(async (tx) => {
    if (!(await markQueued(tx, row.id, bytes, chunks))) return false;
    await enqueueImport(deps.boss, tx, { import_id: row.id });
    return true;
  });
  // Not queued: the upload outlived its deadline and was swept as failed meanwhile.
  return { ...row, status: queued ? 'queued' : 'failed', bytes, chunks };
}

export async function getImport(deps: Pick<ImportServiceDeps, 'sql'>, tenantId: string, id: string): Promise<{ row: ImportRow; errors: RowError[] }> {
  const row = await requireImport(deps, tenantId, id);
  return { row, errors: await firstRowErrors(deps.sql, id, ERRORS_SHOWN) };
}

/** The import, checked to be the tenant's: another tenant's (or a malformed id) is 404. */
export async function requireImport(deps: Pick<ImportServiceDeps, 'sql'>, tenantId: string, id: string): Promise<ImportRow> {
  const row = isUuid(id) ? await findImport(deps.sql, tenantId, id) : undefined;
  if (!row) throw notFound('import');
  return row;
}

export async function listImportPage(
  deps: Pick<ImportServiceDeps, 'sql'>,
  tenantId: string,
  query: { limit: number; after?: string | undefined },
): Promise<{ items: ImportRow[]; next_cursor: string | null; total: number }> {
  const after = query.after ? decodeCursor(query.after) : undefined;
  const rows = await listImports(deps.sql, tenantId, { limit: query.limit + 1, after });
  return { ...pageOf(rows, query.limit), total: await countImports(deps.sql, tenantId) };
}
