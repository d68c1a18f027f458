// The audit appender loop (scheduler role): chains committed audit rows into the hash chain, one process at a time (the chain's advisory lock).
import type { Logger } from 'pino';
import type { Sql } from '../shared/db/connection.js';
import { APPEND_BATCH, chainBatch } from '../shared/operations/audit/appender.js';

export interface RunningAppender {
  stop(): Promise<void>;
}

/** How long the appender sleeps when nothing is pending: rows join the chain within about this long of committing. */
export const APPEND_IDLE_MS = 250;

/**
 * Runs the appender loop (scheduler role): several processes may run it, the lock lets one chain at a time.
 * A failed pass is logged and retried after the idle pause; rows stay unchained meanwhile, never lost.
 */
export function startAuditAppender(deps: { sql: Sql; log: Logger }, idleMs = APPEND_IDLE_MS): RunningAppender {
  const log = deps.log.child({ worker: 'audit-appender' });
  let stopping = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopping) {
      let chained = 0;
      try {
        chained = await chainBatch(deps.sql);
      } catch (err) {
        log.error({ err }, 'audit appender pass failed');
      }
      if (chained === APPEND_BATCH) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, idleMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();
  return {
    stop: async () => {
      stopping = true;
      wake?.();
      await loop;
    },
  };
}
