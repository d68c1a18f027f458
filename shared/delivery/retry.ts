// The retry curve for temporary delivery failures: when to try again, and when to stop trying and bounce (soft).
import type { DeliveryConfig } from '../config/index.js';

type RetryConfig = DeliveryConfig['retry'];

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;

export type RetryDecision =
  | { kind: 'retry'; at: Date }
  /** Too old to try again: the temporary failure becomes a soft bounce. */
  | { kind: 'give_up'; reason: string };

/**
 * Minutes to wait after the `attempt`-th failed attempt (1-based): first_retry_minutes, then
 * factor times the previous wait, never more than max_interval_minutes.
 */
export function retryDelayMinutes(config: RetryConfig, attempt: number): number {
  const n = Math.max(1, Math.floor(attempt));
  // A long run overflows factor ** n to Infinity, which the cap turns back into max_interval_minutes.
  return Math.min(config.first_retry_minutes * config.factor ** (n - 1), config.max_interval_minutes);
}

/**
 * What follows the `attempt`-th temporary failure of a message accepted at `createdAt`, seen at
 * `now`. Once the message is max_age_hours old it is given up on; otherwise the next try is on
 * the curve, but never later than the age limit, so the last try happens right at it.
 */
export function nextRetry(config: RetryConfig, s: { createdAt: Date; now: Date; attempt: number }): RetryDecision {
  const age = s.now.getTime() - s.createdAt.getTime();
  const expiresAt = s.createdAt.getTime() + config.max_age_hours * HOUR_MS;
  if (s.now.getTime() >= expiresAt) {
    return { kind: 'give_up', reason: `gave up after ${attemptsText(s.attempt)} over ${formatHours(age)}` };
  }
  const at = s.now.getTime() + retryDelayMinutes(config, s.attempt) * MINUTE_MS;
  return { kind: 'retry', at: new Date(Math.min(at, expiresAt)) };
}

/** The send's status detail after the `attempt`-th temporary failure, for people reading the send. */
export function retryDetail(decision: RetryDecision, attempt: number, reply: string): string {
  return decision.kind === 'retry'
    ? `temporary failure (attempt ${attempt}): ${reply}; next try at ${decision.at.toISOString()}`
    : `${decision.reason}; last reply: ${reply}`;
}

function attemptsText(n: number): string {
  return n === 1 ? '1 attempt' : `${n} attempts`;
}

/** 72 h, 1.5 h: whole hours when the age is (about) whole, one decimal otherwise. */
export function formatHours(ms: number): string {
  const hours = Math.round((ms / HOUR_MS) * 10) / 10;
  return `${Number.isInteger(hours) ? hours.toFixed(0) : hours.toFixed(1)} h`;
}
