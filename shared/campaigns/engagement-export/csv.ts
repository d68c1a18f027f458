// A campaign's engagement events as CSV, streamed from a database cursor: memory stays flat however many events there are.
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { validationError } from '../../kernel/errors.js';
import { csvCell } from '../../audiences/imports/errors-csv.js';
import { campaignEventCursor, type ExportEvent } from './queries.js';

export const COLUMNS = ['time', 'event_type', 'contact_email', 'contact_id', 'sequence_step', 'user_agent', 'ip_truncated', 'bounce_subtype'] as const;

/** The longest window an export covers. */
export const MAX_WINDOW_DAYS = 90;
const DAY = 86_400_000;

/**
 * The export's window: since (default: the cap) up to now. A since further back than MAX_WINDOW_DAYS is refused
 * (422) rather than silently clipped, so an export never looks complete when it is not.
 */
export function exportWindow(clock: Clock, since: Date | undefined): { since: Date; until: Date } {
  const until = clock.now();
  const earliest = new Date(until.getTime() - MAX_WINDOW_DAYS * DAY);
  if (since === undefined) return { since: earliest, until };
  if (since.getTime() < earliest.getTime())
    throw validationError('since', `the window is capped at ${MAX_WINDOW_DAYS} days: since must be ${earliest.toISOString()} or later`);
  return { since, until };
}

/**
 * One CSV line. contact_email is the address the event's mail went to (erasure replaces it in the message log);
 * sequence_step is empty: Mailpath campaigns are single messages (no multi-step sequences). ip_truncated is stored
 * truncated (/24 or /48); bounce_subtype only on bounces.
 */
export function csvLine(e: ExportEvent): string {
  const cells = [
    e.occurred_at.toISOString(),
    e.type,
    e.recipient,
    e.contact_id ?? '',
    '',
    e.user_agent ?? '',
    e.ip ?? '',
    e.type === 'bounce' ? (e.subtype ?? '') : '',
  ];
  return `${cells.map(csvCell).join(',')}\r\n`;
}

/** The header, then every event of the window oldest first; each yield is one cursor page. */
export async function* engagementCsv(db: Queryable, tenantId: string, campaignId: string, window: { since: Date; until: Date }): AsyncGenerator<string> {
  yield `${COLUMNS.join(',')}\r\n`;
  for await (const page of campaignEventCursor(db, tenantId, campaignId, window.since, window.until)) {
    yield page.map(csvLine).join('');
  }
}
