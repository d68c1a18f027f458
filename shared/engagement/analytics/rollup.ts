// The rollup report (sent, delivered, bounced, opened, clicked, complained per hour or day) and the worker step that keeps its tables fresh.
import type { Clock } from '../../kernel/clock.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { validationError } from '../../kernel/errors.js';
import { pruneRefusalWindows, refreshStaleHours, rollupBuckets } from './queries.js';

export const ROLLUP_MAX_DAYS = 90;
export const ROLLUP_DEFAULT_DAYS = 30;
const DAY = 86_400_000;
/** Stale hours recomputed per transaction, and transactions per tick: a tick's work is bounded, the rest waits 5 minutes. */
const REFRESH_BATCH = 500;
const REFRESH_MAX_BATCHES = 200;

export interface RollupQuery {
  since?: Date;
  until?: Date;
  granularity: 'hour' | 'day';
  includeMachine: boolean;
}

export interface RollupReport {
  buckets: { start: string; sent: number; delivered: number; bounced: number; opened: number; clicked: number; complained: number }[];
  granularity: 'hour' | 'day';
  since: string;
  until: string;
}

/** The window asked for, defaulted (the last 30 days) and checked: since before until, at most 90 days apart. */
export function rollupWindow(clock: Clock, q: Pick<RollupQuery, 'since' | 'until'>): { since: Date; until: Date } {
  const until = q.until ?? clock.now();
  const since = q.since ?? new Date(until.getTime() - ROLLUP_DEFAULT_DAYS * DAY);
  if (since.getTime() > until.getTime()) throw validationError('since', 'must not be after until');
  if (until.getTime() - since.getTime() > ROLLUP_MAX_DAYS * DAY) throw validationError('until', `the range is capped at ${ROLLUP_MAX_DAYS} days`);
  return { since, until };
}

export async function rollupReport(deps: { sql: Queryable; clock: Clock }, tenantId: string, q: RollupQuery): Promise<RollupReport> {
  const { since, until } = rollupWindow(deps.clock, q);
  const rows = await rollupBuckets(deps.sql, tenantId, { since, until, unit: q.granularity, includeMachine: q.includeMachine });
  return {
    buckets: rows.map((r) => ({
      start: r.start.toISOString(),
      sent: r.sent,
      delivered: r.delivered,
      bounced: r.bounced,
      opened: r.opened,
      clicked: r.clicked,
      complained: r.complained,
    })),
    granularity: q.granularity,
    since: since.toISOString(),
    until: until.toISOString(),
  };
}

/** The analytics-rollup worker's tick: recomputes every stale hour (bounded), prunes refusal counters older than a day. */
export async function refreshRollups(deps: { sql: Sql; clock: Clock }): Promise<{ hours_refreshed: number; refusal_windows_pruned: number }> {
  let hours = 0;
  for (let batch = 0; batch < REFRESH_MAX_BATCHES; batch++) {
    const n = await refreshStaleHours(deps.sql, REFRESH_BATCH);
    hours += n;
    if (n < REFRESH_BATCH) break;
  }
  const pruned = await pruneRefusalWindows(deps.sql, new Date(deps.clock.now().getTime() - DAY));
  return { hours_refreshed: hours, refusal_windows_pruned: pruned };
}

/** How many of a range's latest hours are read live rather than from the rollup (the rollup's SQL keeps to it). */
export { LIVE_HOURS_MAX } from './queries.js';
