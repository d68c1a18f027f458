// The outbound log as tenants read it: pages of sends with filters, one send with its attempts and events, and its signed message.
import type { Clock } from '../../kernel/clock.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Sql } from '../../db/connection.js';
import { notFound } from '../../kernel/errors.js';
import { eventsOfSend, type EventRow } from '../../engagement/events/queries.js';
import { isUuid } from '../../kernel/ids.js';
import { countSends, findSend, findSendMessage, listAttempts, listSends, type AttemptRow, type SendFilter, type SendRow } from './queries.js';

export interface SendLogDeps {
  sql: Sql;
  clock: Clock;
}

export async function listSendPage(
  deps: SendLogDeps,
  tenantId: string,
  query: SendFilter & { limit: number; after?: string | undefined },
): Promise<{ items: SendRow[]; next_cursor: string | null; total: number }> {
  const after = query.after ? decodeCursor(query.after) : undefined;
  const filter: SendFilter = {
    status: query.status,
    recipient: query.recipient?.trim().toLowerCase() || undefined,
    from: query.from?.trim().toLowerCase() || undefined,
    campaignId: query.campaignId,
    since: query.since,
    until: query.until,
    text: query.text?.trim() || undefined,
  };
  const rows = await listSends(deps.sql, tenantId, { ...filter, limit: query.limit + 1, after });
  return { ...pageOf(rows, query.limit), total: await countSends(deps.sql, tenantId, filter) };
}

/** A tenant's send with its delivery attempts and events; 404 for an unknown or another tenant's id. */
export async function getSendDetail(deps: SendLogDeps, tenantId: string, id: string): Promise<{ send: SendRow; attempts: AttemptRow[]; events: EventRow[] }> {
  const send = isUuid(id) ? await findSend(deps.sql, tenantId, id) : undefined;
  if (!send) throw notFound('send');
  const [attempts, events] = await Promise.all([listAttempts(deps.sql, id), eventsOfSend(deps.sql, id)]);
  return { send, attempts, events };
}

/**
 * The signed message of a tenant's send, byte for byte what delivery hands (or, for a simulated
 * send, would have handed) to the receiving server. 404 for an unknown or another tenant's id, and
 * for a send that keeps no message (dropped: nothing was built, or it was let go at delivery).
 */
export async function getSendMessage(deps: SendLogDeps, tenantId: string, id: string): Promise<Buffer> {
  const row = isUuid(id) ? await findSendMessage(deps.sql, tenantId, id) : undefined;
  if (!row) throw notFound('send');
  if (!row.message) throw notFound('message of this send (it was dropped, so none was kept)');
  return row.message;
}
