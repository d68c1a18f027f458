// GET /admin/observability/slow-queries: the slowest statements by p99, from pg_stat_statements when the database has it loaded, otherwise from Mailpath's
// own query timing.
import type { Clock } from '../../kernel/clock.js';
import type { ObservabilityConfig } from '../../config/index.js';
import type { Queryable } from '../../db/connection.js';
import { pgStatStatementsAvailable, slowestStatStatements, slowestTimedQueries, type SlowQueryRow } from './queries.js';

export const SLOW_QUERY_LIMITS = { limit: { min: 1, max: 100, default: 10 }, hours: { min: 1, max: 168, default: 24 } } as const;

/** Out-of-range values are clamped silently (the spec); a missing or unreadable one takes the default. */
export function clamp(value: number | undefined, range: { min: number; max: number; default: number }): number {
  if (value === undefined || !Number.isFinite(value)) return range.default;
  return Math.min(range.max, Math.max(range.min, Math.trunc(value)));
}

export type SlowQueryLevel = 'ok' | 'warn' | 'error';

export interface SlowQueryReport {
  as_of: Date;
  lookback_hours: number;
  warn_ms: number;
  error_ms: number;
  source: 'pg_stat_statements' | 'mailpath';
  items: ((Omit<SlowQueryRow, 'latest_window'> & { latest_window: SlowQueryRow['latest_window'] | null }) & { level: SlowQueryLevel })[];
  error: string | null;
}

export async function slowQueryReport(
  deps: { sql: Queryable; clock: Clock; config: { observability: ObservabilityConfig } },
  input: { limit?: number; hours?: number },
): Promise<SlowQueryReport> {
  const limit = clamp(input.limit, SLOW_QUERY_LIMITS.limit);
  const hours = clamp(input.hours, SLOW_QUERY_LIMITS.hours);
  const { warn_ms, error_ms } = deps.config.observability.slow_queries;
  const asOf = deps.clock.now();
  const level = (p99: number): SlowQueryLevel => (p99 >= error_ms ? 'error' : p99 >= warn_ms ? 'warn' : 'ok');
  let source: SlowQueryReport['source'] = 'mailpath';
  try {
    source = (await pgStatStatementsAvailable(deps.sql)) ? 'pg_stat_statements' : 'mailpath';
    const rows =
      source === 'pg_stat_statements'
        ? await slowestStatStatements(deps.sql, limit)
        : await slowestTimedQueries(deps.sql, new Date(asOf.getTime() - hours * 3_600_000), limit, deps.config.observability.query_timing.window_minutes);
    return { as_of: asOf, lookback_hours: hours, warn_ms, error_ms, source, items: rows.map((r) => ({ ...r, level: level(r.p99_ms) })), error: null };
  } catch (err) {
    // The report degrades to no items with the reason, rather than failing the call.
    return { as_of: asOf, lookback_hours: hours, warn_ms, error_ms, source, items: [], error: err instanceof Error ? err.message : String(err) };
  }
}
