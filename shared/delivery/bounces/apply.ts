// Stores what a report means for its send, inside the intake's transaction: the bounce (status, event, suppression when hard), the deferral event, or the
// complaint (event, suppression).
import type { ReportSend } from './queries.js';
import type { Queryable } from '../../db/connection.js';
import { insertEvent } from '../../engagement/events/queries.js';
import type { Logger } from '../../kernel/log.js';
import { eventBase, recordBounce, suppressRecipient } from '../outcomes.js';
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
    await insertEvent(c.tx, { ...eventBase(c.send, c.at), type: 'deferred', subtype: null, detail: { reason: 'delayed_dsn', ...detail } });
    return;
  }
  // 'delivered' included: a remote MTA that answered 250 and bounced later is the normal case.
  await recordBounce(c.tx, c.log, { send: c.send, at: c.at, subtype: effect.subtype, statusDetail: effect.reply, reply: effect.reply, detail });
}

export async function applyComplaint(c: ApplyContext, arf: ArfReport): Promise<void> {
  await insertEvent(c.tx, {
    ...eventBase(c.send, c.at),
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
  await suppressRecipient(c.tx, c.log, c.send, { reason: 'complaint', source: 'complaint', detail }, c.at);
}
