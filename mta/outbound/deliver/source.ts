// One delivery attempt from the send's IP pool: the source address picked (shared/ip-pools), the attempt made from it, and its replies shown to the IP
// watchdog, which may quarantine the address.
import type { ReplySeen } from '../../../shared/delivery/ip-pools/block-rules.js';
import type { IpWatchdog } from '../../../shared/delivery/ip-pools/watchdog.js';
import type { DeliverySend } from '../../../shared/sending/outbound-log/delivery-queries.js';
import type { AttemptResult } from '../../../shared/delivery/classify.js';
import { attemptDelivery, type AttemptDeps } from './attempt.js';
import { classify, parseEnhancedCode, type Classification, type SmtpOutcome } from '../../../shared/delivery/classify.js';
import type { BounceRulesConfig } from '../../../shared/config/index.js';

export interface SourcedAttempt {
  result: AttemptResult;
  classification: Classification;
  /** The pool address the attempt went out from; null when none was bound (no pool) or nothing was sent. */
  sourceAddress: string | null;
}

export interface SourcedAttemptDeps extends Omit<AttemptDeps, 'localAddress' | 'stopOn'> {
  watchdog: IpWatchdog;
  bounceRules: BounceRulesConfig;
}

function replySeen(outcome: SmtpOutcome): ReplySeen | null {
  return outcome.kind === 'reply' ? { code: outcome.code, text: outcome.text, enhanced: parseEnhancedCode(outcome.text, outcome.code) } : null;
}

/**
 * Delivers once from an address of the send's pool. When every address of the pool is
 * quarantined nothing is sent and the attempt is a temporary failure saying so (retried on the
 * curve, so it goes out once an address is released). A reply that meets a block rule
 * quarantines the address, ends the attempt (no other host is asked from that address) and
 * counts as a temporary failure, not a bounce: the address was refused, not the recipient.
 */
export async function attemptFromPool(deps: SourcedAttemptDeps, send: DeliverySend, message: Buffer, signal: AbortSignal): Promise<SourcedAttempt> {
  const source = await deps.watchdog.pick({ tenantId: send.tenant_id, domainId: send.domain_id });
  if (source.kind === 'quarantined') {
    const outcome: SmtpOutcome = {
      kind: 'network',
      text: `not sent: every address of IP pool ${source.pool} is quarantined (the first is released at ${source.until.toISOString()})`,
    };
    return { result: { outcome, remoteHost: null }, classification: classify(deps.bounceRules, outcome), sourceAddress: null };
  }
  const bound = source.kind === 'address' ? source : undefined;
  const { watchdog, bounceRules, ...attemptDeps } = deps;
  const result = await attemptDelivery(
    {
      ...attemptDeps,
      ...(bound
        ? {
            localAddress: bound.address,
            stopOn: (outcome: SmtpOutcome) => {
              const reply = replySeen(outcome);
              return reply !== null && watchdog.blockRule(reply) !== null;
            },
          }
        : {}),
    },
    { to: send.to_email, envelopeFrom: send.envelope_from, message },
    signal,
  );
  let classification = classify(bounceRules, result.outcome);
  const reply = replySeen(result.outcome);
  if (bound && reply) {
    const rule = await watchdog.observe(bound, reply, { destination: result.remoteHost, sendId: send.id });
    if (rule !== null) classification = { ...classification, verdict: { result: 'temporary' } };
  }
  return { result, classification, sourceAddress: bound?.address ?? null };
}
