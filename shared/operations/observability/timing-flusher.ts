// Writes this process's query timing to query_timings every flush interval (and once at shutdown), and deletes windows past retention: how every process's
// timing reaches the slow-query report.
import type { ObservabilityConfig } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { deleteQueryTimingsBefore, upsertQueryTimings } from './queries.js';
import type { QueryTimings } from './query-timing.js';

export interface RunningTimingFlusher {
  /** Writes what is held now (tests, and the last flush at shutdown). */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * `sql` must be the pool without timing: the flusher's own statements are not worth reporting. A failed flush
 * loses nothing held for an open window (the next flush writes its counts again); a closed window's counts
 * are lost with it, which a report of slow statements can afford.
 */
export function startTimingFlusher(
  sql: Sql,
  timings: QueryTimings,
  config: ObservabilityConfig['query_timing'],
  log: Logger,
  now: () => number = Date.now,
): RunningTimingFlusher {
  let running: Promise<void> | undefined;
  const flush = () =>
    (running ??= (async () => {
      try {
        for (const window of timings.take()) await upsertQueryTimings(sql, timings.processId, window.windowStart, window.timings);
        await deleteQueryTimingsBefore(sql, new Date(now() - config.retention_hours * 3_600_000));
      } catch (err) {
        log.warn({ err }, 'query timing flush failed');
      } finally {
        running = undefined;
      }
    })());
  const timer = setInterval(() => void flush(), config.flush_interval_seconds * 1000);
  timer.unref();
  return {
    flush,
    async stop() {
      clearInterval(timer);
      await running;
      await flush();
    },
  };
}
