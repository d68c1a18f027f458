// SQL for the messages of workspace mailboxes (mailbox_messages rows over the stored inbound_messages). Always tenant-scoped.
import type { Queryable } from '../../db/connection.js';

export interface MessageListRow {
  id: string;
  mailbox_id: string;
  header_from: string | null;
  subject: string | null;
  received_at: Date;
  /** received_at in whole microseconds since the epoch, as text: the exact keyset position (a Date keeps only ms). */
  received_us: string;
  seen: boolean;
  size_bytes: number;
}

export interface MessageDetailRow extends MessageListRow {
  recipient: string;
  mail_from: string;
  raw: Buffer;
}

/** Which messages a caller may touch: its tenant's, and for a mailbox session only its mailbox's. */
export interface MessageScope {
  tenantId: string;
  mailboxId?: string | undefined;
}

export interface MessageFilter {
  /** Lower-case text the From header or the subject contains. */
  q?: string | undefined;
  /** true: only unseen; false: only seen. */
  unread?: boolean | undefined;
}

const listColumns = (db: Queryable) =>
  db`m.id, m.mailbox_id, m.header_from, m.subject, m.received_at,
     (extract(epoch from m.received_at) * 1000000)::bigint::text as received_us, m.seen, i.size_bytes`;

const scoped = (db: Queryable, s: MessageScope) => db`m.tenant_id = ${s.tenantId} ${s.mailboxId ? db`and m.mailbox_id = ${s.mailboxId}` : db``}`;

/** LIKE treats % and _ as wildcards; a search for them means the characters themselves. */
function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

const filtered = (db: Queryable, f: MessageFilter) =>
  db`${f.unread === undefined ? db`` : db`and m.seen = ${!f.unread}`}
     ${f.q ? db`and (m.header_from ilike ${likeContains(f.q)} or m.subject ilike ${likeContains(f.q)})` : db``}`;

/** A page of one mailbox's messages, newest first, after a (received_at in µs, id) keyset position. */
export async function listMessages(
  db: Queryable,
  tenantId: string,
  mailboxId: string,
  filter: MessageFilter,
  page: { limit: number; after?: { us: string; id: string } | undefined },
): Promise<MessageListRow[]> {
  const after = page.after;
  return db<MessageListRow[]>`
    select ${listColumns(db)}
    from mailbox_messages m join inbound_messages i on i.id = m.inbound_message_id
    where m.tenant_id = ${tenantId} and m.mailbox_id = ${mailboxId} ${filtered(db, filter)}
      ${after ? db`and (m.received_at, m.id) < (timestamptz 'epoch' + ${after.us}::bigint * interval '1 microsecond', ${after.id}::uuid)` : db``}
    order by m.received_at desc, m.id desc
    limit ${page.limit}`;
}

export async function countMessages(db: Queryable, tenantId: string, mailboxId: string, filter: MessageFilter): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from mailbox_messages m
    where m.tenant_id = ${tenantId} and m.mailbox_id = ${mailboxId} ${filtered(db, filter)}`;
  return row!.n;
}

/** One message with its stored bytes. */
export async function findMessage(db: Queryable, scope: MessageScope, id: string): Promise<MessageDetailRow | undefined> {
  const [row] = await db<MessageDetailRow[]>`
    select ${listColumns(db)}, m.recipient, i.mail_from, i.raw
    from mailbox_messages m join inbound_messages i on i.id = m.inbound_message_id
    where ${scoped(db, scope)} and m.id = ${id}`;
  return row;
}

/** Only the stored bytes, for the raw download. */
export async function findRawMessage(db: Queryable, scope: MessageScope, id: string): Promise<Buffer | undefined> {
  const [row] = await db<{ raw: Buffer }[]>`
    select i.raw from mailbox_messages m join inbound_messages i on i.id = m.inbound_message_id
    where ${scoped(db, scope)} and m.id = ${id}`;
  return row?.raw;
}

export async function setMessageSeen(db: Queryable, scope: MessageScope, id: string, seen: boolean): Promise<MessageListRow | undefined> {
  const [row] = await db<MessageListRow[]>`
    update mailbox_messages m set seen = ${seen}
    from inbound_messages i
    where i.id = m.inbound_message_id and ${scoped(db, scope)} and m.id = ${id}
    returning ${listColumns(db)}`;
  return row;
}

/**
 * Removes the message from its mailbox. The stored inbound_messages row stays: other recipients'
 * mailboxes, the webhook deliveries and the bounce intake refer to the same bytes.
 */
export async function deleteMessage(db: Queryable, scope: MessageScope, id: string): Promise<boolean> {
  const rows = await db`delete from mailbox_messages m where ${scoped(db, scope)} and m.id = ${id} returning m.id`;
  return rows.length > 0;
}
