// Benchmark: audit throughput and chain verification.
//
// Goals:
//   1. 50 concurrent writers, each audited write in a transaction of its own (as the services write them): at least
//      5,000 rows/s, while the appender chains the committed rows behind them. The peer, measured in the same run on
//      the same database, is the writer as it was: one advisory lock per write held until commit (bench/lib/audit-locked.ts).
//      The chain lag (how long the appender needs to chain the last row after the writers stop) and the verdict of
//      verification after both phases are printed too.
//   2. Verifying a chain of 1,000,000 rows (BENCH_VERIFY_ROWS) in under 10 s. The rows are inserted in SQL and chained
//      by the appender (its throughput is printed), then verifyAuditChain walks them.
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides); creates and drops a database of its own.
// BENCH_AUDIT_SECONDS (default 5) is how long each writer phase runs.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { startAuditAppender } from '../jobs/audit-appender.js';
import { chainPending } from '../shared/operations/audit/appender.js';
import { writeAudit, type AuditEvent } from '../shared/operations/audit/log.js';
import { verifyAuditChain } from '../shared/operations/audit/verify.js';
import { connect, type Sql } from '../shared/db/connection.js';
import { migrate } from '../shared/db/migrate.js';
import { createLogger } from '../shared/kernel/log.js';
import { writeAuditLocked } from './lib/audit-locked.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';

const envCount = (name: string, fallback: number, max: number) => Math.min(max, Math.max(1, Math.floor(Number(process.env[name] ?? fallback)) || fallback));
const WRITERS = 50;
const SECONDS = envCount('BENCH_AUDIT_SECONDS', 5, 120);
const VERIFY_ROWS = envCount('BENCH_VERIFY_ROWS', 1_000_000, 10_000_000);
const GOAL = { rowsPerSec: 5000, verifySeconds: 10 };
const TENANT = '11111111-1111-4111-8111-111111111111';

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const verdict = (met: boolean) => (met ? 'goal met' : 'GOAL MISSED');
const out = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);

const event = (writer: number, i: number): AuditEvent => ({
  tenantId: TENANT,
  actor: { type: 'user', id: `bench-user-${writer}`, ip: '203.0.113.7' },
  action: 'bench.write',
  resourceType: 'thing',
  resourceId: `${writer}-${i}`,
  metadata: { writer, i, note: 'an audited change' },
  at: new Date(),
});

/**
 * WRITERS loops, each writing one audited write after another until the time is up; returns rows/s. `inTransaction`:
 * each write in a transaction of its own (begin, insert, commit), as a service audits its change; otherwise the write
 * is given the pool (one autocommitted statement), as writeAudit does outside a transaction.
 */
async function writersFor(
  sql: Sql,
  write: (tx: Sql | postgres.TransactionSql, e: AuditEvent) => Promise<void>,
  inTransaction = true,
): Promise<{ rows: number; perSec: number }> {
  const deadline = performance.now() + SECONDS * 1000;
  let rows = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let i = 0; performance.now() < deadline; i++) {
        if (inTransaction) await sql.begin((tx) => write(tx, event(w, i)));
        else await write(sql, event(w, i));
        rows++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { rows, perSec: rows / seconds };
}

async function benchWriters(sql: Sql, appenderSql: Sql): Promise<void> {
  const loadBefore = load();
  const locked = await writersFor(sql, writeAuditLocked);
  const appender = startAuditAppender({ sql: appenderSql, log: createLogger('silent') }, 50);
  const unlocked = await writersFor(sql, writeAudit);
  const autocommit = await writersFor(sql, writeAudit, false);
  const lagStart = performance.now();
  // Bounded: the appender chains 5,000 rows per pass; far more passes than rows written.
  for (let i = 0; i < 100_000; i++) {
    const [p] = await sql<{ n: number }[]>`select count(*)::int as n from audit_events where chain_seq is null`;
    if (p!.n === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const lag = performance.now() - lagStart;
  await appender.stop();
  const check = await verifyAuditChain(sql);
  out([
    `1. ${WRITERS} concurrent writers, ${SECONDS} s each (load average before: ${loadBefore}):`,
    `   locked writer (peer, lock until commit), a transaction each: ${fmt(locked.perSec)} rows/s (${fmt(locked.rows)} rows)`,
    `   unlocked insert + appender, a transaction each:             ${fmt(unlocked.perSec)} rows/s (${fmt(unlocked.rows)} rows), ` +
      `${fmt(unlocked.perSec / locked.perSec, 1)}x the peer — goal ≥ ${fmt(GOAL.rowsPerSec)}: ${verdict(unlocked.perSec >= GOAL.rowsPerSec)}`,
    `   unlocked, autocommitted (one statement): ${fmt(autocommit.perSec)} rows/s (${fmt(autocommit.rows)} rows), ` +
      `${fmt(autocommit.perSec / locked.perSec, 1)}x the peer`,
    `   chain lag after the writers stopped: ${fmt(lag)} ms; chain ${check.intact ? 'intact' : `BROKEN at ${check.brokenAt}`} over ${fmt(check.rows)} rows`,
  ]);
}

async function benchVerify(sql: Sql): Promise<void> {
  const before = (await sql<{ n: number }[]>`select count(*)::int as n from audit_events`)[0]!.n;
  const toAdd = Math.max(0, VERIFY_ROWS - before);
  let t0 = performance.now();
  // In slices, so no single statement holds millions of rows' worth of WAL at once.
  for (let done = 0; done < toAdd; done += 100_000) {
    const n = Math.min(100_000, toAdd - done);
    await sql`
      insert into audit_events (tenant_id, actor_type, actor_id, action, resource_type, resource_id, metadata, ip, created_at)
      select ${TENANT}, 'system', null, 'bench.bulk', 'thing', g::text, jsonb_build_object('i', g, 'note', 'bulk row'), null, now()
      from generate_series(1, ${n}) g`;
  }
  const insertS = (performance.now() - t0) / 1000;
  t0 = performance.now();
  const chained = await chainPending(sql);
  const chainS = (performance.now() - t0) / 1000;
  await sql`vacuum analyze audit_events`;
  t0 = performance.now();
  const report = await verifyAuditChain(sql);
  const verifyS = (performance.now() - t0) / 1000;
  out([
    `2. a chain of ${fmt(report.rows)} rows (${fmt(toAdd)} inserted in SQL in ${fmt(insertS, 1)} s):`,
    `   appender chained ${fmt(chained)} rows in ${fmt(chainS, 1)} s (${fmt(chained / chainS)} rows/s)`,
    `   verifyAuditChain: ${fmt(verifyS, 2)} s (${fmt(report.rows / verifyS)} rows/s), ${report.intact ? 'intact' : `BROKEN at ${report.brokenAt}`} — goal ` +
      `< ${GOAL.verifySeconds} s: ${verdict(verifyS < GOAL.verifySeconds && report.rows >= VERIFY_ROWS)}`,
  ]);
}

export default async function runAuditBench(): Promise<void> {
  const dbName = benchDatabaseName();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const log = createLogger('silent');
  let sql: Sql | undefined;
  let appenderSql: Sql | undefined;
  try {
    await admin.unsafe(`create database "${dbName}"`);
    sql = connect(dbUrl.toString(), log, { max: WRITERS });
    appenderSql = connect(dbUrl.toString(), log, { max: 2 });
    await migrate(sql);
    out([`audit bench: ${cpus().length} cores, load average ${load()}; PostgreSQL pool of ${WRITERS} writers, the appender on its own connection`]);
    await benchWriters(sql, appenderSql);
    await benchVerify(sql);
    out([`   load average after: ${load()}`]);
  } finally {
    await appenderSql?.end({ timeout: 5 });
    await sql?.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch((err: unknown) => process.stderr.write(`drop database: ${String(err)}\n`));
    await admin.end();
  }
}
