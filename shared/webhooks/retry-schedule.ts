// What follows one webhook POST (inbound and event webhooks alike): delivered, retried later (backoff or Retry-After) or dead-lettered, per the spec's
// receiver-answer table.
import type { WebhooksConfig } from '../config/index.js';
import type { PostResult } from './post.js';

type ScheduleConfig = Pick<WebhooksConfig, 'retry_delays_seconds'>;

/** A Retry-After is honoured within these bounds: never a hot loop, never longer than the longest backoff the spec allows. */
export const RETRY_AFTER_MIN_SECONDS = 1;
export const RETRY_AFTER_MAX_SECONDS = 24 * 3600;

export type Decision = { kind: 'delivered' } | { kind: 'retry'; at: Date; error: string } | { kind: 'dead'; error: string };

/** One more attempt than there are waits between them: the default six waits make the spec's 7 attempts. */
export function maxAttempts(config: ScheduleConfig): number {
  return config.retry_delays_seconds.length + 1;
}

/** Seconds to wait after the `attempt`-th (1-based) attempt failed; the last wait repeats past the list's end. */
export function backoffSeconds(config: ScheduleConfig, attempt: number): number {
  const delays = config.retry_delays_seconds;
  return delays[Math.min(Math.max(1, attempt), delays.length) - 1]!;
}

/**
 * A Retry-After value (RFC 9110 §10.2.3: delay-seconds or an HTTP-date) as seconds from `now`,
 * clamped to [RETRY_AFTER_MIN_SECONDS, RETRY_AFTER_MAX_SECONDS]; undefined when absent or unreadable.
 */
export function retryAfterSeconds(value: string | undefined, now: Date): number | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  let seconds: number;
  if (/^\d+$/.test(text)) {
    seconds = Number(text);
  } else {
    // An HTTP-date starts with its weekday (IMF-fixdate, RFC 850 or asctime); Date.parse reads all three.
    if (!/^[A-Za-z]{3,9},? \S/.test(text)) return undefined;
    const at = Date.parse(text);
    if (Number.isNaN(at)) return undefined;
    seconds = Math.ceil((at - now.getTime()) / 1000);
  }
  return Math.min(RETRY_AFTER_MAX_SECONDS, Math.max(RETRY_AFTER_MIN_SECONDS, seconds));
}

/** What went wrong, as stored in last_error and shown by test-send. */
export function describeResult(result: PostResult): string {
  if (result.kind !== 'answered') return result.error;
  return result.snippet ? `HTTP ${result.status}: ${result.snippet}` : `HTTP ${result.status}`;
}

/**
 * Decides the outcome of attempt number `attempt` (1-based). 2xx: delivered. 4xx other than 429
 * (and any other non-2xx, non-5xx answer: redirects are never followed): dead at once. 429:
 * retried after its Retry-After, or on the backoff without one. 5xx, timeout, connection error,
 * a refused address: retried on the backoff. Every POST counts as an attempt, so a receiver
 * answering 429 forever is dead-lettered after the last one too.
 */
export function decide(config: ScheduleConfig, s: { attempt: number; result: PostResult; now: Date }): Decision {
  const { result } = s;
  const error = describeResult(result);
  if (result.kind === 'answered') {
    const status = result.status;
    if (status >= 200 && status < 300) return { kind: 'delivered' };
    if (status !== 429 && status < 500) {
      const why = status >= 400 ? 'a 4xx answer is not retried' : 'only a 2xx answer delivers; redirects are not followed';
      return { kind: 'dead', error: `${error} (${why})` };
    }
  }
  const last = maxAttempts(config);
  if (s.attempt >= last) return { kind: 'dead', error: `${error} (gave up after ${last} attempts)` };
  const requested = result.kind === 'answered' && result.status === 429 ? retryAfterSeconds(result.retryAfter, s.now) : undefined;
  const wait = requested ?? backoffSeconds(config, s.attempt);
  return { kind: 'retry', at: new Date(s.now.getTime() + wait * 1000), error };
}
