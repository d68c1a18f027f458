// Opaque keyset cursors for ?after=<cursor> lists: the (created_at, id) of the last row of a page.
import { AppError } from './errors.js';
import { isUuid } from './ids.js';

export interface KeysetPosition {
  at: Date;
  id: string;
}

export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(`${position.at.toISOString()}|${position.id}`, 'utf8').toString('base64url');
}

/** Decodes a cursor from ?after=; a cursor that was not made by encodeCursor is a bad request. */
export function decodeCursor(cursor: string): KeysetPosition {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const [iso, id, ...rest] = text.split('|');
  const at = new Date(iso ?? '');
  if (rest.length > 0 || id === undefined || !isUuid(id) || Number.isNaN(at.getTime()) || encodeCursor({ at, id }) !== cursor) {
    throw new AppError('bad_request', 'after: not a cursor returned by this list');
  }
  return { at, id };
}

/** next_cursor of a page fetched with limit + 1 rows: set only when a further row exists. */
export function pageOf<T extends { created_at: Date; id: string }>(rows: T[], limit: number): { items: T[]; next_cursor: string | null } {
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > limit && last ? encodeCursor({ at: last.created_at, id: last.id }) : null };
}
