// SQL of bounce intake: the stored bounce mail, the sends a report can map to, the handled-report marks and the inbound recipient's attribution.
import type { Queryable } from '../../db/connection.js';
import type { SendStatus } from '../../sending/outbound-log/queries.js';

/** An inbound recipient of kind 'bounce' with its message. */
export interface BounceMail {
  recipient_id: string;
  inbound_message_id: string;
  /** The envelope recipient: a VERP address or the feedback-loop address. */
  recipient: string;
  kind: 'tenant' | 'bounce' | 'unsubscribe';
  tenant_id: string | null;
  /** The envelope sender ('' for a null sender, as bounces have). */
  mail_from: string;
  raw: Buffer;
}

export async function loadBounceMail(db: Queryable, recipientId: string): Promise<BounceMail | undefined> {
  const [row] = await db<BounceMail[]>`
    select r.id as recipient_id, r.message_id as inbound_message_id, r.recipient, r.kind, r.tenant_id, m.mail_from, m.raw
    from inbound_recipients r join inbound_messages m on m.id = r.message_id
    where r.id = ${recipientId}`;
  return row;
}

/** A send as a report about it needs it. */
export interface ReportSend {
  id: string;
  tenant_id: string;
  mode: 'live' | 'test';
  status: SendStatus;
  to_email: string;
  /** The RFC 5322 Message-ID, without angle brackets. */
  message_id: string;
}

export async function findReportSend(db: Queryable, id: string): Promise<ReportSend | undefined> {
  const [row] = await db<ReportSend[]>`select id, tenant_id, mode, status, to_email, message_id from sends where id = ${id}`;
  return row;
}

/**
 * Up to two sends with this Message-ID (two mean it is ambiguous), among those to `recipients`
 * when given. Several sends share one Message-ID when a message submitted over SMTP had several
 * recipients, or when two tenants chose the same one.
 */
export async function findReportSendsByMessageId(db: Queryable, messageId: string, recipients?: string[]): Promise<ReportSend[]> {
  return db<ReportSend[]>`
    select id, tenant_id, mode, status, to_email, message_id from sends
    where message_id = ${messageId} ${recipients ? db`and to_email = any(${recipients}::text[])` : db``}
    limit 2`;
}

/** The send, locked until the transaction ends: reports about one send are applied one at a time. */
export async function lockReportSend(db: Queryable, id: string): Promise<ReportSend | undefined> {
  const [row] = await db<ReportSend[]>`select id, tenant_id, mode, status, to_email, message_id from sends where id = ${id} for update`;
  return row;
}

export async function reportHandled(db: Queryable, recipientId: string): Promise<boolean> {
  const [row] = await db`select 1 from bounce_reports where inbound_recipient_id = ${recipientId}`;
  return row !== undefined;
}

export interface HandledReport {
  recipientId: string;
  kind: 'dsn' | 'arf' | 'unknown';
  outcome: string;
  sendId: string | null;
  tenantId: string | null;
  detail: Record<string, unknown>;
  at: Date;
}

/**
 * Marks the report handled; false when it already was. Run first in the transaction that applies
 * the report: a second run of the same job waits for the first to commit, then finds the mark.
 */
export async function markReportHandled(db: Queryable, r: HandledReport): Promise<boolean> {
  const rows = await db`
    insert into bounce_reports (inbound_recipient_id, kind, outcome, send_id, tenant_id, detail, handled_at)
    values (${r.recipientId}, ${r.kind}, ${r.outcome}, ${r.sendId}, ${r.tenantId}, ${db.json(r.detail as never)}, ${r.at})
    on conflict (inbound_recipient_id) do nothing
    returning 1`;
  return rows.length > 0;
}

/** Attributes the bounce mail to the tenant of the send it reported on. */
export async function attributeRecipient(db: Queryable, recipientId: string, tenantId: string): Promise<void> {
  await db`update inbound_recipients set tenant_id = ${tenantId} where id = ${recipientId} and kind = 'bounce'`;
}

export async function sendHasEvent(db: Queryable, sendId: string, type: string): Promise<boolean> {
  const [row] = await db`select 1 from events where send_id = ${sendId} and type = ${type} limit 1`;
  return row !== undefined;
}
