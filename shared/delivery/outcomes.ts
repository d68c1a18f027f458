// How a send's delivery ends, one rule for every path that learns it: a bounce (an attempt's SMTP reply, or a DSN that came back later) marks the send
// bounced, writes its bounce event and suppresses a hard-bounced recipient, for the send's tenant only.
import type { Queryable } from '../db/connection.js';
import { insertEvent, type NewEvent } from '../engagement/events/queries.js';
import { AppError } from '../kernel/errors.js';
import type { Logger } from '../kernel/log.js';
import { setDeliveryStatus, type StatusChange } from '../sending/outbound-log/delivery-queries.js';
import { suppress, type SuppressInput } from '../audiences/suppressions/service.js';

/** The send whose delivery ended; a campaign send's campaign and contact ride along so the events trigger need not look them up. */
export interface EndedSend {
  id: string;
  tenant_id: string;
  message_id: string;
  to_email: string;
  campaign_id?: string | null;
  contact_id?: string | null;
}

/** The part of an event every outcome of the send shares. */
export function eventBase(send: EndedSend, at: Date): Omit<NewEvent, 'type' | 'subtype' | 'detail'> {
  return {
    tenant_id: send.tenant_id,
    send_id: send.id,
    message_id: send.message_id,
    recipient: send.to_email,
    occurred_at: at,
    ...(send.campaign_id !== undefined ? { campaign_id: send.campaign_id } : {}),
    ...(send.contact_id !== undefined ? { contact_id: send.contact_id } : {}),
  };
}

/**
 * Suppresses the send's recipient for the send's tenant only (a report never reaches another tenant's list). The
 * suppression's message_id holds the id of the send that caused it. An address the list cannot hold (checked before
 * any SQL) is logged and left: the outcome still stands.
 */
export async function suppressRecipient(
  tx: Queryable,
  log: Logger,
  send: EndedSend,
  s: Pick<SuppressInput, 'reason' | 'source' | 'detail'>,
  at: Date,
): Promise<void> {
  try {
    await suppress(tx, send.tenant_id, { email: send.to_email, ...s, messageId: send.id, at });
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    log.warn({ err, sendId: send.id, reason: s.reason }, 'recipient could not be suppressed');
  }
}

export interface Bounce {
  send: EndedSend;
  at: Date;
  subtype: 'hard' | 'soft';
  /** The send's status_detail (the reply, or the retry schedule's verdict). */
  statusDetail: string;
  /** The remote reply, kept on a hard bounce's suppression. */
  reply: string;
  /** The bounce event's detail. */
  detail: Record<string, unknown>;
}

/** What a bounce writes: the send's status, its bounce event, and for a hard bounce the suppression of its recipient (null for a soft one). */
export interface BounceWrites {
  status: StatusChange;
  event: NewEvent;
  suppression: RecipientSuppression | null;
}

/** A recipient to put on its tenant's suppression list because of one of its sends. */
export interface RecipientSuppression {
  send: EndedSend;
  reason: SuppressInput['reason'];
  source: SuppressInput['source'];
  detail: string | null;
  at: Date;
}

/** The bounce rule, without the SQL: a hard bounce suppresses its recipient, a soft one does not. */
export function bounceWrites(b: Bounce): BounceWrites {
  return {
    status: { status: 'bounced', at: b.at, detail: b.statusDetail },
    event: { ...eventBase(b.send, b.at), type: 'bounce', subtype: b.subtype, detail: b.detail },
    suppression: b.subtype === 'hard' ? { send: b.send, reason: 'hard_bounce', source: 'bounce', detail: b.reply, at: b.at } : null,
  };
}

/** The send bounced: its status, its bounce event, and a hard bounce's recipient suppressed, in the caller's transaction. */
export async function recordBounce(tx: Queryable, log: Logger, b: Bounce): Promise<void> {
  const writes = bounceWrites(b);
  await setDeliveryStatus(tx, b.send.id, writes.status);
  await insertEvent(tx, writes.event);
  if (writes.suppression) await suppressRecipient(tx, log, b.send, writes.suppression, b.at);
}
