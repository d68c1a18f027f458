// SQL for the event feed: append one event, read a tenant's feed (cursor pages, filters), and a send's history.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../../db/connection.js';
import { enqueueFeedEvents } from '../../webhooks/events/outbox.js';
import type { EventRow, EventType, NewEvent } from './event.js';

export type { EventRow, EventType, NewEvent } from './event.js';

/** Appends one event; pass the transaction recording what happened, since its webhook deliveries are queued on it too. */
export async function insertEvent(db: Queryable, e: NewEvent): Promise<void> {
  const id = randomUUID();
  await db`
    insert into events (id, tenant_id, type, subtype, send_id, message_id, recipient, detail, occurred_at, campaign_id, contact_id)
    values (${id}, ${e.tenant_id}, ${e.type}, ${e.subtype}, ${e.send_id}, ${e.message_id}, ${e.recipient},
            ${db.json(e.detail as never)}, ${e.occurred_at}, ${e.campaign_id ?? null}, ${e.contact_id ?? null})`;
  await enqueueFeedEvents(db, [{ ...e, id }]);
}

/** An event to store with its id chosen; subtype may be left out (null). */
export type EventToWrite = Omit<EventRow, 'subtype'> & { subtype?: string | null };

/**
 * Stores events in one statement, from one JSON parameter: its text is the same whatever the batch's size, so it is
 * prepared and planned once per connection (a VALUES list of 11 parameters a row was a new statement per batch size,
 * planned on almost every call of the send path's group commits). The caller queues them for webhooks.
 */
export async function writeEvents(db: Queryable, events: readonly EventToWrite[]): Promise<void> {
  if (events.length === 0) return;
  await db`
    insert into events (id, tenant_id, type, subtype, send_id, message_id, recipient, detail, occurred_at, campaign_id, contact_id)
    select v.id, v.tenant_id, v.type, v.subtype, v.send_id, v.message_id, v.recipient, v.detail, v.occurred_at, v.campaign_id, v.contact_id
    from jsonb_to_recordset(${db.json(events as never)}) as v(id uuid, tenant_id uuid, type text, subtype text, send_id uuid, message_id text,
      recipient text, detail jsonb, occurred_at timestamptz, campaign_id uuid, contact_id uuid)`;
}

/** Many events in one statement (writeEvents), queued for the tenants' event webhooks in the same transaction. */
export async function insertEvents(db: Queryable, events: NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => ({
    id: randomUUID(),
    tenant_id: e.tenant_id,
    type: e.type,
    subtype: e.subtype,
    send_id: e.send_id,
    message_id: e.message_id,
    recipient: e.recipient,
    detail: e.detail,
    occurred_at: e.occurred_at,
    campaign_id: e.campaign_id ?? null,
    contact_id: e.contact_id ?? null,
  }));
  await writeEvents(db, rows);
  await enqueueFeedEvents(db, rows);
}

export interface EventFilter {
  type?: EventType | undefined;
  since?: Date | undefined;
  messageId?: string | undefined;
  sendId?: string | undefined;
  recipient?: string | undefined;
}

const where = (db: Queryable, tenantId: string, f: EventFilter) => db`
  where tenant_id = ${tenantId}
    ${f.type ? db`and type = ${f.type}` : db``}
    ${f.since ? db`and occurred_at >= ${f.since}` : db``}
    ${f.messageId ? db`and message_id = ${f.messageId}` : db``}
    ${f.sendId ? db`and send_id = ${f.sendId}` : db``}
    ${f.recipient ? db`and recipient = ${f.recipient}` : db``}`;

export async function listEvents(
  db: Queryable,
  tenantId: string,
  f: EventFilter & { limit: number; after?: { at: Date; id: string } | undefined },
): Promise<EventRow[]> {
  return db<EventRow[]>`
    select id, tenant_id, type, subtype, send_id, message_id, recipient, detail, occurred_at, campaign_id, contact_id from events
    ${where(db, tenantId, f)}
      ${f.after ? db`and (occurred_at, id) < (${f.after.at}, ${f.after.id})` : db``}
    order by occurred_at desc, id desc
    limit ${f.limit}`;
}

export async function countEvents(db: Queryable, tenantId: string, f: EventFilter): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from events ${where(db, tenantId, f)}`;
  return row!.n;
}

/** A send's events, oldest first. */
export async function eventsOfSend(db: Queryable, sendId: string): Promise<EventRow[]> {
  return db<EventRow[]>`
    select id, tenant_id, type, subtype, send_id, message_id, recipient, detail, occurred_at, campaign_id, contact_id from events
    where send_id = ${sendId} order by occurred_at, id`;
}
