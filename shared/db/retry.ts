// Runs a transaction again when PostgreSQL aborted it to break a deadlock or a serialization conflict: nothing of it was kept.
import { setTimeout as sleep } from 'node:timers/promises';

/** deadlock_detected and serialization_failure: the transaction was rolled back and may simply be run again. */
const RETRYABLE = new Set(['40P01', '40001']);

export function isRetryableConflict(err: unknown): boolean {
  return typeof err === 'object' && err !== null && RETRYABLE.has((err as { code?: unknown }).code as string);
}

/**
 * Calls `run` until it succeeds, at most `attempts` times, while it fails with a retryable conflict; waits a random
 * few milliseconds (doubling) between tries so the two sides of a deadlock do not meet again at once.
 */
export async function retryConflicts<R>(run: () => Promise<R>, onRetry: (err: unknown, attempt: number) => void, attempts = 5): Promise<R> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= attempts || !isRetryableConflict(err)) throw err;
      onRetry(err, attempt);
      await sleep(Math.random() * 5 * 2 ** attempt);
    }
  }
}
