// Stores what a mapped report means, in one transaction and exactly once however often the intake runs: the report marked handled (with its
// outcome), the recipient attributed to the send's tenant, and the report's effect on the send (apply.ts).
import type { BounceRulesConfig } from '../../config/index.js';
import type { Queryable, Sql } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { applyComplaint, applyDsn } from './apply.js';
import { decideEffect, type Effect } from './effects.js';
import type { Mapping } from './mapping.js';
import { attributeRecipient, lockReportSend, markReportHandled, sendHasEvent, type BounceMail } from './queries.js';
import type { Report } from './report.js';

export interface StoreDeps {
  sql: Sql;
  bounceRules: BounceRulesConfig;
  log: Logger;
}

export interface StoredReport {
  /** What the report ended with, or why nothing was recorded (the intake's outcomes, see jobs/bounce-intake/intake.ts). */
  outcome: string;
  sendId: string | null;
}

export interface MappedReport {
  mail: BounceMail;
  report: Report;
  mapping: Mapping;
  at: Date;
}

export async function storeReport(deps: StoreDeps, r: MappedReport): Promise<StoredReport> {
  return deps.sql.begin((tx) => store(deps, tx, r));
}

async function store(deps: StoreDeps, tx: Queryable, r: MappedReport): Promise<StoredReport> {
  const { mail, report, mapping, at } = r;
  const base = { recipientId: mail.recipient_id, kind: report.kind, at, detail: summary(report, mapping) };
  // Locked first: reports about one send (and two runs of one job) are applied one after the other.
  const send = mapping.result === 'send' ? await lockReportSend(tx, mapping.send.id) : undefined;
  if (mapping.result !== 'send' || !send) {
    // A send deleted between the look-up and the lock maps nothing either.
    let outcome: string = mapping.result === 'none' ? mapping.outcome : 'unmapped';
    if (report.kind === 'unknown' && outcome === 'unmapped') outcome = 'unknown';
    const marked = await markReportHandled(tx, { ...base, outcome, sendId: null, tenantId: null });
    return { outcome: marked ? outcome : 'duplicate', sendId: null };
  }
  // Fetched from a tenant's own bounce mailbox: a report there may only touch that tenant's sends (a
  // tenant must not be able to bounce another's recipients by mailing itself a forged report).
  if (mail.tenant_id !== null && mail.kind === 'bounce' && send.tenant_id !== mail.tenant_id) {
    const marked = await markReportHandled(tx, { ...base, outcome: 'foreign', sendId: null, tenantId: null });
    return { outcome: marked ? 'foreign' : 'duplicate', sendId: null };
  }
  const effect: Effect =
    report.kind === 'unknown'
      ? { effect: 'none', outcome: 'unknown' }
      : decideEffect(deps.bounceRules, report, send, { complainedBefore: report.kind === 'arf' && (await sendHasEvent(tx, send.id, 'complaint')) });
  const outcome = effect.effect === 'none' ? effect.outcome : effect.effect === 'bounce' ? `bounce_${effect.subtype}` : effect.effect;
  if (!(await markReportHandled(tx, { ...base, outcome, sendId: send.id, tenantId: send.tenant_id }))) return { outcome: 'duplicate', sendId: send.id };
  // Attributable to its tenant from now on, whatever the report turned out to say.
  await attributeRecipient(tx, mail.recipient_id, send.tenant_id);
  const ctx = { tx, log: deps.log, send, at, origin: { inbound_message_id: mail.inbound_message_id, mapped_by: mapping.by } };
  if (report.kind === 'dsn' && (effect.effect === 'bounce' || effect.effect === 'deferred')) await applyDsn(ctx, report.dsn, effect);
  else if (report.kind === 'arf' && effect.effect === 'complaint') await applyComplaint(ctx, report.arf);
  return { outcome, sendId: send.id };
}

/** What bounce_reports keeps of the report: enough to see later why it ended as it did. */
function summary(report: Report, mapping: Mapping): Record<string, unknown> {
  const mapped = mapping.result === 'send' ? { mapped_by: mapping.by } : {};
  switch (report.kind) {
    case 'unknown':
      return { reason: report.reason, ...mapped };
    case 'arf':
      return { feedback_type: report.arf.feedback_type, user_agent: report.arf.user_agent, source_ip: report.arf.source_ip, ...mapped };
    case 'dsn':
      return {
        standard: report.dsn.standard,
        reporting_mta: report.dsn.reporting_mta,
        recipients: report.dsn.recipients.map((e) => ({ recipient: e.recipient, action: e.action, status: e.status, diagnostic: e.diagnostic })),
        ...mapped,
      };
  }
}
