// The 'delivery attempt' log line: one per attempt, as stored (send, destination host, reply, delay since acceptance, outcome), so a refusal leaves a trace
// an operator can grep.
import type { Logger } from '../../../shared/kernel/log.js';
import type { DeliverySend } from '../../../shared/sending/outbound-log/delivery-queries.js';
import type { Classification } from '../../../shared/delivery/classify.js';
import type { RecordedOutcome } from '../../../shared/delivery/record.js';

export interface AttemptFacts {
  send: Pick<DeliverySend, 'id' | 'tenant_id' | 'to_email' | 'created_at' | 'attempts'>;
  /** The host that answered ("mx1.example.net [192.0.2.1]"), null when none was reached. */
  remoteHost: string | null;
  /** The IP-pool address it went out from; null when the system picked (no pool) or nothing was sent. */
  sourceAddress?: string | null;
  classification: Classification;
  recorded: RecordedOutcome;
  /** When the attempt started. */
  at: Date;
  durationMs: number;
}

export function logAttempt(log: Logger, a: AttemptFacts): void {
  const { classification: c, recorded } = a;
  log.info(
    {
      send_id: a.send.id,
      tenant_id: a.send.tenant_id,
      to: a.send.to_email,
      attempt: a.send.attempts + 1,
      host: a.remoteHost,
      ...(a.sourceAddress ? { source: a.sourceAddress } : {}),
      code: c.smtpCode,
      enhanced: c.enhancedCode,
      reply: c.reply,
      // Seconds from acceptance (the send's creation) to this attempt, as Postfix's delay=.
      delay_s: Math.max(0, Math.round((a.at.getTime() - a.send.created_at.getTime()) / 100) / 10),
      duration_ms: Math.round(a.durationMs),
      outcome: recorded.outcome,
      ...(recorded.outcome === 'bounced' ? { bounce: recorded.bounce } : {}),
      ...(recorded.outcome === 'deferred' ? { next_retry: recorded.nextRetry.toISOString() } : {}),
    },
    'delivery attempt',
  );
}
