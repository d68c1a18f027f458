// Where PostgreSQL's time goes during a bench phase, from pg_stat_statements (the server must preload it): the bench
// database's costliest statements, with planning shown apart from execution (a statement re-planned on every call
// shows a planning time beside its execution time).
import type postgres from 'postgres';

export interface StatementReport {
  /** Prints the costliest statements since the reset, their time divided by `count` (the phase's messages or hits, named by `unit`). */
  print(count: number, unit: string): Promise<void>;
}

/** Resets the bench database's statement statistics now; `print` reads what ran since. */
export async function pgStatements(sql: postgres.Sql): Promise<StatementReport> {
  await sql`create extension if not exists pg_stat_statements`;
  const [db] = await sql<{ oid: number }[]>`select oid::int as oid from pg_database where datname = current_database()`;
  await sql`select pg_stat_statements_reset(0, ${db!.oid}::oid, 0)`;
  return {
    async print(count, unit) {
      const rows = await sql<{ calls: number; exec: number; plan: number; query: string }[]>`
        select calls::int, total_exec_time::float8 as exec, total_plan_time::float8 as plan,
          left(regexp_replace(query, '[[:space:]]+', ' ', 'g'), 110) as query
        from pg_stat_statements where dbid = ${db!.oid}::oid order by total_exec_time + total_plan_time desc limit 15`;
      process.stdout.write(
        `    PostgreSQL statements (µs per ${unit}: execution, planning; nested statements such as triggers' and foreign-key checks' are counted ` +
          `inside their caller too):\n`,
      );
      for (const r of rows) {
        const per = (ms: number) => ((ms * 1000) / count).toFixed(1).padStart(6);
        process.stdout.write(`    ${per(r.exec)} ${per(r.plan)}  ${String(r.calls).padStart(7)} calls  ${r.query}\n`);
      }
    },
  };
}
