// The event feed as tenants read it: cursor pages filtered by type, time, message and recipient.
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Sql } from '../../db/connection.js';
import { isUuid } from '../../kernel/ids.js';
import { countEvents, listEvents, type EventFilter, type EventRow, type EventType } from './queries.js';

export interface EventQuery {
  limit: number;
  after?: string | undefined;
  type?: EventType | undefined;
  since?: Date | undefined;
  /** The message_id a send answered with (the send id), or the RFC 5322 Message-ID. */
  message_id?: string | undefined;
  recipient?: string | undefined;
}

export async function listEventPage(sql: Sql, tenantId: string, q: EventQuery): Promise<{ items: EventRow[]; next_cursor: string | null; total: number }> {
  const after = q.after ? decodeCursor(q.after) : undefined;
  const messageId = q.message_id?.trim().replace(/^<|>$/g, '');
  const filter: EventFilter = {
    type: q.type,
    since: q.since,
    ...(messageId ? (isUuid(messageId) ? { sendId: messageId.toLowerCase() } : { messageId }) : {}),
    recipient: q.recipient?.trim().toLowerCase() || undefined,
  };
  const rows = await listEvents(sql, tenantId, { ...filter, limit: q.limit + 1, after });
  const page = pageOf(
    rows.map((r) => ({ ...r, created_at: r.occurred_at })),
    q.limit,
  );
  return { items: page.items, next_cursor: page.next_cursor, total: await countEvents(sql, tenantId, filter) };
}
