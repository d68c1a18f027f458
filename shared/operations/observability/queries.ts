// SQL of the observability reports: query timing rows (write and read), pg_stat_statements detection and read.
import type { Queryable } from '../../db/connection.js';
import type { StatementTiming } from './query-timing.js';

/** Replaces this process's rows of one window with what it holds now (counts only grow while the window is open). */
export async function upsertQueryTimings(sql: Queryable, processId: string, windowStart: Date, timings: StatementTiming[]): Promise<void> {
  if (timings.length === 0) return;
  const rows = timings.map((t) => ({
    window_start: windowStart,
    statement_hash: t.hash,
    process_id: processId,
    statement: t.statement,
    calls: t.calls,
    total_ms: t.totalMs,
    max_ms: t.maxMs,
    samples: `{${t.samples.join(',')}}`,
  }));
  await sql`
    insert into query_timings ${sql(rows, 'window_start', 'statement_hash', 'process_id', 'statement', 'calls', 'total_ms', 'max_ms', 'samples')}
    on conflict (window_start, statement_hash, process_id) do update
       set calls = excluded.calls, total_ms = excluded.total_ms, max_ms = excluded.max_ms, samples = excluded.samples`;
}

export async function deleteQueryTimingsBefore(sql: Queryable, before: Date): Promise<number> {
  const result = await sql`delete from query_timings where window_start < ${before}`;
  return result.count;
}

export interface TimingStats {
  calls: number;
  p99_ms: number;
  mean_ms: number;
  max_ms: number;
}

export interface SlowQueryRow extends TimingStats {
  query: string;
  latest_window: TimingStats & { start: Date; end: Date };
}

const round = (n: number | null) => (n === null ? 0 : Math.round(n * 100) / 100);

/**
 * The statements with the highest p99 since `since`, across every process: p99 from the pooled duration
 * samples, calls/mean/max from the exact counts; each with the same figures for its latest window alone.
 */
export async function slowestTimedQueries(sql: Queryable, since: Date, limit: number, windowMinutes: number): Promise<SlowQueryRow[]> {
  const rows = await sql<
    {
      statement: string;
      calls: string;
      mean_ms: number | null;
      max_ms: number;
      p99_ms: number | null;
      w_start: Date;
      w_calls: string;
      w_mean_ms: number | null;
      w_max_ms: number;
      w_p99_ms: number | null;
    }[]
  >`
    with recent as (
      select * from query_timings where window_start >= ${since}
    ), overall as (
      select statement_hash, min(statement) as statement, sum(calls) as calls,
             sum(total_ms) / nullif(sum(calls), 0) as mean_ms, max(max_ms) as max_ms
        from recent group by statement_hash
    ), overall_p99 as (
      select r.statement_hash, percentile_cont(0.99) within group (order by s.ms) as p99_ms
        from recent r cross join lateral unnest(r.samples) as s(ms)
       group by r.statement_hash
    ), latest as (
      select distinct on (statement_hash) statement_hash, window_start
        from recent order by statement_hash, window_start desc
    ), latest_stats as (
      select r.statement_hash, l.window_start, sum(r.calls) as calls,
             sum(r.total_ms) / nullif(sum(r.calls), 0) as mean_ms, max(r.max_ms) as max_ms
        from recent r join latest l using (statement_hash, window_start)
       group by r.statement_hash, l.window_start
    ), latest_p99 as (
      select r.statement_hash, percentile_cont(0.99) within group (order by s.ms) as p99_ms
        from recent r join latest l using (statement_hash, window_start)
        cross join lateral unnest(r.samples) as s(ms)
       group by r.statement_hash
    )
    select o.statement, o.calls, o.mean_ms, o.max_ms, p.p99_ms,
           ls.window_start as w_start, ls.calls as w_calls, ls.mean_ms as w_mean_ms, ls.max_ms as w_max_ms, lp.p99_ms as w_p99_ms
      from overall o
      left join overall_p99 p using (statement_hash)
      join latest_stats ls using (statement_hash)
      left join latest_p99 lp using (statement_hash)
     order by p.p99_ms desc nulls last, o.max_ms desc, o.statement
     limit ${limit}`;
  return rows.map((r) => ({
    query: r.statement,
    calls: Number(r.calls),
    p99_ms: round(r.p99_ms),
    mean_ms: round(r.mean_ms),
    max_ms: round(r.max_ms),
    latest_window: {
      start: r.w_start,
      end: new Date(r.w_start.getTime() + windowMinutes * 60_000),
      calls: Number(r.w_calls),
      p99_ms: round(r.w_p99_ms),
      mean_ms: round(r.w_mean_ms),
      max_ms: round(r.w_max_ms),
    },
  }));
}

/** Whether pg_stat_statements can be read here: the extension created and its library preloaded (else reading it fails). */
export async function pgStatStatementsAvailable(sql: Queryable): Promise<boolean> {
  const [ext] = await sql<{ n: number }[]>`select count(*)::int as n from pg_extension where extname = 'pg_stat_statements'`;
  if (!ext || ext.n === 0) return false;
  try {
    await sql.unsafe('select 1 from pg_stat_statements limit 1');
    return true;
  } catch {
    return false;
  }
}

/**
 * The statements of this database with the highest estimated p99 from pg_stat_statements, which keeps no
 * percentiles: p99 ≈ mean + 2.326 standard deviations (a normal tail), capped at the observed maximum.
 * Its counters are cumulative since the last reset, so it has no windows: latest_window is null.
 */
export async function slowestStatStatements(sql: Queryable, limit: number): Promise<(Omit<SlowQueryRow, 'latest_window'> & { latest_window: null })[]> {
  const rows = await sql.unsafe<{ query: string; calls: string; mean_ms: number; max_ms: number; p99_ms: number }[]>(
    `select query, calls, mean_exec_time as mean_ms, max_exec_time as max_ms,
            least(max_exec_time, mean_exec_time + 2.326 * stddev_exec_time) as p99_ms
       from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database())
      order by p99_ms desc
      limit $1`,
    [limit],
  );
  return rows.map((r) => ({
    query: r.query,
    calls: Number(r.calls),
    p99_ms: round(r.p99_ms),
    mean_ms: round(r.mean_ms),
    max_ms: round(r.max_ms),
    latest_window: null,
  }));
}
