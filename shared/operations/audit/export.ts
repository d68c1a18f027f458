// The audit export's row format, shared by the CSV (streamed) and the PDF (digest in every footer): one CSV line per row, so `sha256sum` over the CSV's rows
// recomputes the PDF digest.
import { createHash } from 'node:crypto';
import type { Clock } from '../../kernel/clock.js';
import { canonicalJson } from './chain.js';
import { csvCell } from '../../audiences/imports/errors-csv.js';
import type { AuditRow } from './log.js';
import { countSelection, selectionCursor, selectRows, type AuditSelection } from './queries.js';
import type { TenantQueries } from '../../db/deadline.js';
import { AppError, validationError } from '../../kernel/errors.js';

export const AUDIT_COLUMNS = ['id', 'time', 'action', 'actor_type', 'actor_id', 'resource_type', 'resource_id', 'ip', 'metadata', 'hash'] as const;

/** The most rows one PDF export holds (the spec's Limits). */
export const PDF_MAX_ROWS = 10_000;
/** The CSV export's default window. */
export const CSV_DEFAULT_DAYS = 30;
const DAY = 86_400_000;

/**
 * One row as a CSV line (ending in \r\n): cells starting with = + - @ (or a tab or carriage return) get a leading '
 * so spreadsheets keep them as text. hash is empty until the appender has chained the row.
 */
export function auditCsvLine(r: AuditRow): string {
  const cells = [
    r.id,
    r.created_at.toISOString(),
    r.action,
    r.actor_type,
    r.actor_id ?? '',
    r.resource_type ?? '',
    r.resource_id ?? '',
    r.ip ?? '',
    canonicalJson(r.metadata),
    r.hash ?? '',
  ];
  return `${cells.map(csvCell).join(',')}\r\n`;
}

export const AUDIT_CSV_HEADER = `${AUDIT_COLUMNS.join(',')}\r\n`;

/** SHA-256 (hex) over the rows' CSV lines concatenated, header excluded: what every PDF page footer carries. */
export function rowsDigest(rows: readonly AuditRow[]): string {
  const h = createHash('sha256');
  for (const r of rows) h.update(auditCsvLine(r));
  return h.digest('hex');
}

/** The header, then every selected row in export order; each yield is one cursor page. */
export async function* auditCsv(db: Parameters<typeof selectionCursor>[0], s: AuditSelection): AsyncGenerator<string> {
  yield AUDIT_CSV_HEADER;
  for await (const page of selectionCursor(db, s)) yield page.map(auditCsvLine).join('');
}

/**
 * The CSV window from the from/to dates (YYYY-MM-DD, UTC, both inclusive): default the last CSV_DEFAULT_DAYS days up
 * to now. Returned as [since, until) instants; from after to is 422.
 */
export function csvWindow(clock: Clock, from: string | undefined, to: string | undefined): { since: Date; until: Date } {
  const now = clock.now();
  const until = to !== undefined ? new Date(Date.parse(`${to}T00:00:00Z`) + DAY) : new Date(now.getTime() + 1);
  const since = from !== undefined ? new Date(`${from}T00:00:00Z`) : new Date(now.getTime() - CSV_DEFAULT_DAYS * DAY);
  if (since.getTime() >= until.getTime()) throw validationError('from', 'must be on or before to');
  return { since, until };
}

/**
 * The PDF window from since/until (RFC 3339, [since, until)): default the last CSV_DEFAULT_DAYS days up to now; since
 * must come before until (422).
 */
export function pdfWindow(clock: Clock, since: string | undefined, until: string | undefined): { since: Date; until: Date } {
  const now = clock.now();
  const window = {
    since: since !== undefined ? new Date(since) : new Date(now.getTime() - CSV_DEFAULT_DAYS * DAY),
    until: until !== undefined ? new Date(until) : new Date(now.getTime() + 1),
  };
  if (window.since.getTime() >= window.until.getTime()) throw validationError('since', 'must be before until');
  return window;
}

/**
 * The rows of a PDF export, counted and read in one tenant-shaped query (its deadline and slot): at most `limit`, and
 * a selection with more is refused (400 with limit and row_count), never truncated.
 */
export async function pdfRows(queries: TenantQueries, selection: AuditSelection, limit: number): Promise<AuditRow[]> {
  return queries.run(selection.tenantId, 'export', async (tx) => {
    const rowCount = await countSelection(tx, selection);
    if (rowCount > limit) {
      throw new AppError('bad_request', `the selection holds ${rowCount} audit rows; a PDF export holds at most ${limit}: narrow the window or the filters`, {
        details: { limit, row_count: rowCount },
      });
    }
    return selectRows(tx, selection, limit);
  });
}
