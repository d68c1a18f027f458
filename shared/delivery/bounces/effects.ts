// Decides what a report means for the send it maps to: a hard or soft bounce, a deferral, a complaint, or nothing (and why).
import type { BounceRulesConfig } from '../../config/index.js';
import type { ReportSend } from './queries.js';
import { isComplaint } from './arf.js';
import type { DsnRecipient } from './dsn.js';
import type { Report } from './report.js';
import { bounceClass, parseEnhancedCode } from '../classify.js';

export type Effect =
  | { effect: 'bounce'; subtype: 'hard' | 'soft'; entry: DsnRecipient; reply: string }
  | { effect: 'deferred'; entry: DsnRecipient }
  | { effect: 'complaint' }
  /** Nothing to record; `outcome` names why (stored with the report and logged). */
  | { effect: 'none'; outcome: string };

// Statuses of a send whose message may have reached the remote side. A delivery still retrying
// ('deferred', 'sending') may already have been accepted once: an attempt cut off after the data.
const LEFT = new Set(['delivered', 'bounced', 'deferred', 'sending']);

/**
 * Hard or soft for a DSN recipient whose delivery failed: a 4.x.x status (the remote side gave up
 * after temporary failures) is soft; otherwise the delivery path's rules (config/bounce-rules.yaml)
 * judge the status and diagnostic as they judge a 5xx reply. A vague X.0.0 status gives way to a
 * precise code of the same class in the diagnostic.
 */
export function failureSubtype(rules: BounceRulesConfig, entry: Pick<DsnRecipient, 'status' | 'diagnostic'>): 'hard' | 'soft' {
  const reply = entry.diagnostic ?? '';
  const basic = /^\s*([245]\d\d)\b/.exec(reply)?.[1];
  const fromReply = parseEnhancedCode(reply, basic === undefined ? undefined : Number(basic));
  let code = entry.status;
  if (code === null || (/^\d\.0\.0$/.test(code) && fromReply?.[0] === code[0])) code = fromReply ?? code;
  if (code?.startsWith('4') || (code === null && basic?.startsWith('4'))) return 'soft';
  return bounceClass(rules, reply, code);
}

/** The report's entry about this send's recipient, else all of them (forwarding changes the address). */
function entriesFor(recipients: DsnRecipient[], to: string): DsnRecipient[] {
  const address = to.toLowerCase();
  const own = recipients.filter((r) => r.recipient === address || r.original_recipient === address);
  return own.length > 0 ? own : recipients;
}

export function decideEffect(
  rules: BounceRulesConfig,
  report: Exclude<Report, { kind: 'unknown' }>,
  send: ReportSend,
  c: { complainedBefore: boolean },
): Effect {
  // A test-key message never left the MTA: whatever claims to report on it is not believed.
  if (send.mode !== 'live') return { effect: 'none', outcome: 'test_send' };
  if (!LEFT.has(send.status)) return { effect: 'none', outcome: 'not_sent' };
  if (report.kind === 'arf') {
    if (!isComplaint(report.arf)) return { effect: 'none', outcome: 'not_a_complaint' };
    return c.complainedBefore ? { effect: 'none', outcome: 'already_complained' } : { effect: 'complaint' };
  }
  const entries = entriesFor(report.dsn.recipients, send.to_email);
  const failed = entries.find((e) => e.action === 'failed');
  const delayed = entries.find((e) => e.action === 'delayed');
  if (!failed && !delayed) return { effect: 'none', outcome: 'no_failure' };
  // A send bounces once: a second report of it (or a late delay warning) changes nothing.
  if (send.status === 'bounced') return { effect: 'none', outcome: 'already_bounced' };
  if (!failed) return { effect: 'deferred', entry: delayed! };
  const reply = failed.diagnostic ?? (failed.status ? `status ${failed.status}` : 'reported as failed, no diagnostic given');
  return { effect: 'bounce', subtype: failureSubtype(rules, failed), entry: failed, reply };
}
