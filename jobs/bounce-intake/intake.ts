// Handles one bounce-mail recipient: reads the report (DSN, ARF or neither), maps it to its send, and stores what it means, exactly once however often the
// job runs.
import type { Config } from '../../shared/config/index.js';
import type { Clock } from '../../shared/kernel/clock.js';
import type { Queryable, Sql } from '../../shared/db/connection.js';
import {
  attributeRecipient,
  loadBounceMail,
  lockReportSend,
  markReportHandled,
  reportHandled,
  sendHasEvent,
  type BounceMail,
} from '../../shared/delivery/bounces/queries.js';
import { isUuid } from '../../shared/kernel/ids.js';
import type { Logger } from '../../shared/kernel/log.js';
import { applyComplaint, applyDsn } from '../../shared/delivery/bounces/apply.js';
import { decideEffect, type Effect } from '../../shared/delivery/bounces/effects.js';
import { mapReport, type Mapping } from '../../shared/delivery/bounces/mapping.js';
import { readReport, type Report } from '../../shared/delivery/bounces/report.js';

export interface IntakeDeps {
  sql: Sql;
  config: Pick<Config, 'hostname' | 'bounceRules'>;
  clock: Clock;
  log: Logger;
  /** Verifies VERP bounce addresses (see shared/sending/outbound-log/verp.ts). */
  verpKey: Buffer;
}

/**
 * What the job ended with: bounce_hard, bounce_soft, deferred, complaint; or why nothing was
 * recorded: forged, unmapped, ambiguous, unknown (not a report), test_send, not_sent,
 * already_bounced, already_complained, not_a_complaint, no_failure, foreign (a report fetched from one
 * tenant's bounce mailbox about another tenant's send); duplicate (handled before),
 * missing (no such row), not_bounce (a tenant recipient), skipped (a malformed job).
 */
export type IntakeOutcome = string;

/**
 * Runs the intake for one inbound_recipients row. Every report ends handled, mapped or not, so a
 * report that can never map does not come back; only a failure to reach the database throws (and
 * the job is retried).
 */
export async function runBounceIntake(deps: IntakeDeps, recipientId: unknown): Promise<IntakeOutcome> {
  if (typeof recipientId !== 'string' || !isUuid(recipientId)) return 'skipped';
  const mail = await loadBounceMail(deps.sql, recipientId);
  if (!mail) return 'missing';
  if (mail.kind !== 'bounce') return 'not_bounce';
  // The cheap check first; the mark taken in the transaction below is what guarantees once.
  if (await reportHandled(deps.sql, recipientId)) return 'duplicate';
  const report = await readReport(mail.raw, { mailFrom: mail.mail_from });
  const mapping = await mapReport({ sql: deps.sql, verpKey: deps.verpKey, hostname: deps.config.hostname }, mail, report);
  const at = deps.clock.now();
  const result = await deps.sql.begin((tx) => store(deps, tx, { mail, report, mapping, at }));
  const facts = {
    recipientId,
    inboundMessageId: mail.inbound_message_id,
    rcpt: mail.recipient,
    report: report.kind,
    outcome: result.outcome,
    sendId: result.sendId,
  };
  if (result.outcome === 'forged') deps.log.warn(facts, 'bounce mail to a VERP address with a wrong signature; ignored');
  else if (result.outcome === 'test_send') deps.log.warn(facts, 'a report about a test-mode send (which never left); ignored');
  else if (report.kind === 'unknown') deps.log.info({ ...facts, reason: report.reason }, 'bounce mail that is not a report; recorded as handled');
  else deps.log.info(facts, 'bounce report handled');
  return result.outcome;
}

interface Stored {
  outcome: IntakeOutcome;
  sendId: string | null;
}

async function store(deps: IntakeDeps, tx: Queryable, r: { mail: BounceMail; report: Report; mapping: Mapping; at: Date }): Promise<Stored> {
  const { mail, report, mapping, at } = r;
  const base = { recipientId: mail.recipient_id, kind: report.kind, at, detail: summary(report, mapping) };
  // Locked first: reports about one send (and two runs of one job) are applied one after the other.
  const send = mapping.result === 'send' ? await lockReportSend(tx, mapping.send.id) : undefined;
  if (mapping.result !== 'send' || !send) {
    // A send deleted between the look-up and the lock maps nothing either.
    let outcome: IntakeOutcome = mapping.result === 'none' ? mapping.outcome : 'unmapped';
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
      : decideEffect(deps.config.bounceRules, report, send, { complainedBefore: report.kind === 'arf' && (await sendHasEvent(tx, send.id, 'complaint')) });
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
