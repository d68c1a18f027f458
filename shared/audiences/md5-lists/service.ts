// MD5 suppression lists: create, read, list and delete a tenant's lists, and upload hashes (one hex MD5 per line) streamed in batches; isListed is what the
// campaign send asks.
import type { Readable } from 'node:stream';
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { lines } from '../imports/lines.js';
import { UploadFailure, uploadPieces } from '../imports/upload.js';
import { addMd5Entries, countMd5Lists, deleteMd5List, findMd5List, insertMd5List, listedAddresses, listMd5Lists, type Md5ListRow } from './queries.js';

export interface Md5Deps {
  sql: Sql;
  clock: Clock;
  config: Pick<Config, 'limits'>;
}

/** Hashes written per statement. */
const BATCH = 5000;
/** Invalid lines named in the answer. */
const INVALID_SHOWN = 10;
/** A line longer than this cannot be a hash (32 hex digits plus spaces): it is invalid, its bytes not kept. */
const MAX_LINE_BYTES = 1024;
const HEX_MD5 = /^[0-9a-fA-F]{32}$/;

export async function createMd5List(deps: Md5Deps, tenantId: string, name: string): Promise<Md5ListRow> {
  const trimmed = name.trim();
  if (trimmed === '') throw validationError('name', 'must not be blank');
  return insertMd5List(deps.sql, tenantId, trimmed, deps.clock.now());
}

export async function getMd5List(deps: Pick<Md5Deps, 'sql'>, tenantId: string, id: string): Promise<Md5ListRow> {
  const row = isUuid(id) ? await findMd5List(deps.sql, tenantId, id) : undefined;
  if (!row) throw notFound('MD5 list');
  return row;
}

export async function listMd5ListPage(
  deps: Pick<Md5Deps, 'sql'>,
  tenantId: string,
  query: { limit: number; after?: string | undefined },
): Promise<{ items: Md5ListRow[]; next_cursor: string | null; total: number }> {
  const after = query.after ? decodeCursor(query.after) : undefined;
  const rows = await listMd5Lists(deps.sql, tenantId, { limit: query.limit + 1, after });
  return { ...pageOf(rows, query.limit), total: await countMd5Lists(deps.sql, tenantId) };
}

export async function removeMd5List(deps: Pick<Md5Deps, 'sql'>, tenantId: string, id: string): Promise<void> {
  if (!isUuid(id) || !(await deleteMd5List(deps.sql, tenantId, id))) throw notFound('MD5 list');
}

export interface Md5UploadResult {
  added: number;
  /** Valid hashes the list already held, or that came more than once. */
  duplicates: number;
  invalid: number;
  /** The first invalid lines' numbers. */
  invalid_lines: number[];
}

/**
 * Adds the hashes of `body` (one hex MD5 of a lower-cased address per line; blank lines skipped, upper-case hex
 * lower-cased) to the tenant's list, a batch at a time while the body arrives. Each batch commits on its own: an
 * upload cut short keeps what was stored before the cut (sending it again is harmless, repeats are ignored).
 */
export async function uploadMd5Entries(deps: Md5Deps, tenantId: string, listId: string, body: Readable): Promise<Md5UploadResult> {
  const list = await getMd5List(deps, tenantId, listId);
  const limits = deps.config.limits.imports;
  const result: Md5UploadResult = { added: 0, duplicates: 0, invalid: 0, invalid_lines: [] };
  let batch: string[] = [];
  const flush = async () => {
    const added = await addMd5Entries(deps.sql, list.id, batch, deps.clock.now());
    result.added += added;
    result.duplicates += batch.length - added;
    batch = [];
  };
  try {
    const pieces = uploadPieces(body, { maxBytes: limits.max_file_bytes, timeoutMs: limits.upload_timeout_ms, idleTimeoutMs: limits.upload_idle_timeout_ms });
    for await (const l of lines(pieces, MAX_LINE_BYTES)) {
      const text = 'bytes' in l ? l.bytes.toString('latin1').trim() : undefined;
      if (text === '') continue;
      if (text === undefined || !HEX_MD5.test(text)) {
        result.invalid++;
        if (result.invalid_lines.length < INVALID_SHOWN) result.invalid_lines.push(l.line);
        continue;
      }
      batch.push(text.toLowerCase());
      if (batch.length >= BATCH) await flush();
    }
  } catch (err) {
    throw err instanceof UploadFailure ? err.answer : err;
  }
  await flush();
  return result;
}

/**
 * For the campaign send: which of a batch of normalized addresses the tenant's MD5 list holds (md5 of the
 * lower-cased address), in one query. An unknown list, or another tenant's, holds none.
 */
export async function isListed(db: Queryable, tenantId: string, listId: string, emails: readonly string[]): Promise<Set<string>> {
  if (!isUuid(listId)) return new Set();
  return listedAddresses(db, tenantId, listId, emails);
}
