// Stores what a report means for its send, inside the intake's transaction: the bounce (status, event, suppression when hard), the deferral event, or the complaint (event, suppression).
import type { ReportSend } from './queries.js';
import type { Queryable } from '../../db/connection.js';
import { AppError } from '../../kernel/errors.js';
import { insertEvent, type NewEvent } from '../../engagement/events/queries.js';
import type { Logger } from '../../kernel/log.js';
import { setDeliveryStatus } from '../../sending/outbound-log/delivery-queries.js';
import { suppress, type SuppressInput } from '../../audiences/suppressions/service.js';
import type { ArfReport } from './arf.js';
import type { Dsn, DsnRecipient } from './dsn.js';
import type { Effect } from './effects.js';
import type { MappedBy } from './mapping.js';

export interface ApplyContext {
  tx: Queryable;
  log: Logger;
  send: ReportSend;
  at: Date;
  /** Facts every event of this report carries: where it came from and how it was mapped. */
  origin: { inbound_message_id: string; mapped_by: MappedBy };
}

const eventBase = (c: ApplyContext): Omit<NewEvent, 'type' | 'subtype' | 'detail'> => ({
  tenant_id: c.send.tenant_id,
  send_id: c.send.id,
  message_id: c.send.message_id,
  recipient: c.send.to_email,
  occurred_at: c.at,
});

/** The DSN entry in the words delivery events use (reply, smtp_code, enhanced_code, remote_host), plus the DSN's own. */
function dsnFacts(dsn: Dsn, entry: DsnRecipient): Record<string, unknown> {
  const basic = entry.diagnostic ? /^\s*([245]\d\d)\b/.exec(entry.diagnostic)?.[1] : undefined;
  return {
    source: dsn.standard ? 'dsn' : 'plain_bounce',
    action: entry.action,
    reply: entry.diagnostic,
    smtp_code: basic === undefined ? null : Number(basic),
    enhanced_code: entry.status,
    remote_host: entry.remote_mta,
    reporting_mta: dsn.reporting_mta,
    reported_recipient: entry.recipient,
  };
}

export async function applyDsn(c: ApplyContext, dsn: Dsn, effect: Extract<Effect, { effect: 'bounce' | 'deferred' }>): Promise<void> {
  const detail = { ...dsnFacts(dsn, effect.entry), ...c.origin };
  if (effect.effect === 'deferred') {
    // The remote side still retries: nothing about the send changes yet.
    await insertEvent(c.tx, { ...eventBase(c), type: 'deferred', subtype: null, detail: { reason: 'delayed_dsn', ...detail } });
    return;
  }
  // 'delivered' included: a remote MTA that answered 250 and bounced later is the normal case.
  await setDeliveryStatus(c.tx, c.send.id, { status: 'bounced', at: c.at, detail: effect.reply });
  await insertEvent(c.tx, { ...eventBase(c), type: 'bounce', subtype: effect.subtype, detail });
  if (effect.subtype === 'hard') await suppressRecipient(c, { reason: 'hard_bounce', source: 'bounce', detail: effect.reply });
}

export async function applyComplaint(c: ApplyContext, arf: ArfReport): Promise<void> {
  await insertEvent(c.tx, {
    ...eventBase(c),
    type: 'complaint',
    subtype: null,
    detail: {
      source: 'arf',
      feedback_type: arf.feedback_type,
      user_agent: arf.user_agent,
      source_ip: arf.source_ip,
      arrival_date: arf.arrival_date,
      reported_domain: arf.reported_domain,
      ...c.origin,
    },
  });
  const detail = `${arf.feedback_type} report from ${arf.user_agent ?? 'a feedback loop'}`;
  await suppressRecipient(c, { reason: 'complaint', source: 'complaint', detail });
}

/** Suppresses the send's recipient for the send's tenant only: a report never reaches another tenant's list. */
async function suppressRecipient(c: ApplyContext, s: Pick<SuppressInput, 'reason' | 'source' | 'detail'>): Promise<void> {
  try {
    // The suppression's message_id column holds the id of the send that caused it, not the RFC 5322 Message-ID.
    await suppress(c.tx, c.send.tenant_id, { email: c.send.to_email, ...s, messageId: c.send.id, at: c.at });
  } catch (err) {
    // Only an address the list cannot hold gets here (checked before any SQL runs): the event still stands.
    if (!(err instanceof AppError)) throw err;
    c.log.warn({ err, sendId: c.send.id }, 'reported recipient could not be suppressed');
  }
}
