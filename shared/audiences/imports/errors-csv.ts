// An import's invalid rows as CSV (line,reason), streamed page by page, each cell safe to open in a spreadsheet.
import type { Queryable } from '../../db/connection.js';
import { rowErrorsAfter } from './queries.js';

const PAGE = 1000;

/**
 * One CSV cell: quoted when it holds a delimiter, quote or line break; a cell a spreadsheet would take for a formula
 * (starting with = + - @, a tab or a carriage return) is prefixed with ' so it stays text (CSV injection).
 */
export function csvCell(text: string): string {
  const safe = /^[=+\-@\t\r]/.test(text) ? `'${text}` : text;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The header, then every invalid row by line. */
export async function* rowErrorsCsv(db: Queryable, importId: string): AsyncGenerator<string> {
  yield 'line,reason\r\n';
  let after = 0;
  for (;;) {
    const page = await rowErrorsAfter(db, importId, after, PAGE);
    if (page.length === 0) return;
    yield page.map((e) => `${e.line},${csvCell(e.reason)}\r\n`).join('');
    if (page.length < PAGE) return;
    after = page[page.length - 1]!.line;
  }
}
