// Handles one bounce-mail recipient: reads the report (DSN, ARF or neither), maps it to its send, and has shared/delivery/bounces/store.ts store what
// it means, exactly once however often the job runs.
import type { Config } from '../../shared/config/index.js';
import type { Clock } from '../../shared/kernel/clock.js';
import type { Sql } from '../../shared/db/connection.js';
import { loadBounceMail, reportHandled } from '../../shared/delivery/bounces/queries.js';
import { isUuid } from '../../shared/kernel/ids.js';
import type { Logger } from '../../shared/kernel/log.js';
import { mapReport } from '../../shared/delivery/bounces/mapping.js';
import { readReport } from '../../shared/delivery/bounces/report.js';
import { storeReport } from '../../shared/delivery/bounces/store.js';

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
  // The cheap check first; the mark taken in the store's transaction is what guarantees once.
  if (await reportHandled(deps.sql, recipientId)) return 'duplicate';
  const report = await readReport(mail.raw, { mailFrom: mail.mail_from });
  const mapping = await mapReport({ sql: deps.sql, verpKey: deps.verpKey, hostname: deps.config.hostname }, mail, report);
  const at = deps.clock.now();
  const result = await storeReport({ sql: deps.sql, bounceRules: deps.config.bounceRules, log: deps.log }, { mail, report, mapping, at });
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
