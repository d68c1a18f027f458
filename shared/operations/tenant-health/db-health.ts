// The database figures an operator looks at beside a tenant: connections, size, last vacuum, replication lag, slow statements; each probe on its own, a
// failing one gives null.
import type { Sql } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';

export interface DbHealth {
  connections_active: number | null;
  db_size_mb: number | null;
  last_vacuum_at: Date | null;
  replication_lag_s: number | null;
  slow_query_count_24h: number | null;
}

/** Statements averaging at least this long count as slow. */
export const SLOW_QUERY_MS = 1000;

type Probe<K extends keyof DbHealth> = (sql: Sql) => Promise<DbHealth[K]>;
export type DbHealthProbes = { [K in keyof DbHealth]: Probe<K> };

export const DB_HEALTH_PROBES: DbHealthProbes = {
  connections_active: async (sql) => {
    const [r] = await sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where datname = current_database() and state = 'active'`;
    return r!.n;
  },
  db_size_mb: async (sql) => {
    const [r] = await sql<{ mb: number }[]>`select round(pg_database_size(current_database()) / 1048576.0, 1)::float8 as mb`;
    return r!.mb;
  },
  // The latest manual or automatic vacuum of any table of this database; null when none was ever vacuumed.
  last_vacuum_at: async (sql) => {
    const [r] = await sql<{ at: Date | null }[]>`select max(greatest(last_vacuum, last_autovacuum)) as at from pg_stat_user_tables`;
    return r!.at;
  },
  // On a replica: how far replay is behind; on a primary: the slowest replica's replay lag (0 without replicas).
  replication_lag_s: async (sql) => {
    const [r] = await sql<{ lag: number }[]>`
      select case when pg_is_in_recovery()
        then coalesce(extract(epoch from now() - pg_last_xact_replay_timestamp()), 0)
        else coalesce((select max(extract(epoch from replay_lag)) from pg_stat_replication), 0)
      end::float8 as lag`;
    return Math.round(r!.lag * 1000) / 1000;
  },
  // Calls of statements averaging over SLOW_QUERY_MS, from pg_stat_statements, counted since its last reset within the
  // last 24 hours (an older reset would count more than a day: null then). Null too without the extension.
  slow_query_count_24h: async (sql) => {
    const [info] = await sql<{ reset: Date }[]>`select stats_reset as reset from pg_stat_statements_info`;
    if (!info || Date.now() - info.reset.getTime() > 86_400_000) return null;
    const [r] = await sql<{ n: number }[]>`
      select coalesce(sum(calls), 0)::int as n from pg_stat_statements
      where dbid = (select oid from pg_database where datname = current_database()) and mean_exec_time >= ${SLOW_QUERY_MS}`;
    return r!.n;
  },
};

/** Runs every probe side by side on the pool (no shared transaction, so one failing statement spoils nothing else). */
export async function dbHealth(deps: { sql: Sql; log: Logger }, probes: DbHealthProbes = DB_HEALTH_PROBES): Promise<DbHealth> {
  const keys = Object.keys(probes) as (keyof DbHealth)[];
  const values = await Promise.all(
    keys.map((k) =>
      (probes[k] as Probe<typeof k>)(deps.sql).catch((err: unknown) => {
        deps.log.warn({ err, probe: k }, 'database health probe failed');
        return null;
      }),
    ),
  );
  return Object.fromEntries(keys.map((k, i) => [k, values[i]])) as unknown as DbHealth;
}
