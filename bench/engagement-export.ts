// Benchmark: the engagement CSV of a campaign with 1,000,000 events, streamed from the database cursor into a sink, with memory sampled throughout.
//
// Goal: constant memory. The export's peak heap over the 1,000,000-event run stays within a few MB of the
// 100,000-event run (the route returns exactly this stream; here it is drained in process, so the figures are the
// export's own, not an HTTP client's). Rows/s are printed for reference.
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides); creates and drops a database of its own.
// BENCH_EXPORT_EVENTS (default 1,000,000) events, inserted in SQL 200,000 per statement.
import { randomUUID } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import { connect, type Sql } from '../shared/db/connection.js';
import { migrate } from '../shared/db/migrate.js';
import { engagementCsv } from '../shared/campaigns/engagement-export/csv.js';
import { createLogger } from '../shared/kernel/log.js';
import { insertTenant } from '../shared/accounts/tenants/queries.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';

const EVENTS = Math.min(5_000_000, Math.max(100_000, Math.floor(Number(process.env['BENCH_EXPORT_EVENTS'] ?? 1_000_000)) || 1_000_000));
const SMALL = 100_000;
/** Peak heap of the big run may exceed the small run's by at most this much (MB). */
const GOAL = { heapGrowthMb: 16 };
const MB = 1024 * 1024;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const out = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);

async function seed(sql: Sql, tenantId: string, campaignId: string, n: number, start: Date): Promise<void> {
  for (let from = 0; from < n; from += 200_000) {
    await sql`
      insert into events (id, tenant_id, type, subtype, recipient, detail, occurred_at, campaign_id, contact_id)
      select gen_random_uuid(), ${tenantId}, (array['send','delivered','open','click','bounce'])[1 + g % 5],
        case when g % 5 = 4 then 'soft' end, 'reader' || (g % 50000) || '@bench.example',
        jsonb_build_object('user_agent', 'Mozilla/5.0 (bench ' || g || ')', 'ip', '198.51.100.0'),
        ${start}::timestamptz + g * interval '1 millisecond', ${campaignId}, gen_random_uuid()
      from generate_series(${from + 1}::int, ${Math.min(n, from + 200_000)}::int) g`;
  }
  await sql`vacuum analyze events`;
}

/** Drains one export, sampling heap and RSS every 50 ms; returns rows, bytes, seconds and the peaks. */
async function drain(
  sql: Sql,
  tenantId: string,
  campaignId: string,
  since: Date,
): Promise<{ rows: number; bytes: number; seconds: number; heapMb: number; rssMb: number }> {
  global.gc?.();
  let heap = process.memoryUsage().heapUsed;
  let rss = process.memoryUsage().rss;
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    heap = Math.max(heap, m.heapUsed);
    rss = Math.max(rss, m.rss);
  }, 50);
  let bytes = 0;
  let rows = -1; // the header
  const sink = new Writable({
    // A slow-ish consumer (as a network socket is): back-pressure must hold the cursor, not buffer the rows.
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      for (const c of chunk) if (c === 10) rows++;
      setImmediate(done);
    },
  });
  const t0 = performance.now();
  await pipeline(Readable.from(engagementCsv(sql, tenantId, campaignId, { since, until: new Date(Date.now() + 86_400_000) })), sink);
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  return { rows, bytes, seconds, heapMb: heap / MB, rssMb: rss / MB };
}

export default async function runEngagementExportBench(): Promise<{ heapGrowthMb: number; met: boolean }> {
  const dbName = benchDatabaseName();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  let sql: Sql | undefined;
  try {
    await admin.unsafe(`create database "${dbName}"`);
    sql = connect(dbUrl.toString(), createLogger('silent'), { max: 4 });
    await migrate(sql);
    const tenant = await insertTenant(sql, { name: 'Bench', slug: 'bench-export' });
    const small = randomUUID();
    const big = randomUUID();
    for (const id of [small, big]) {
      await sql`insert into campaigns (id, tenant_id, name, status, created_at, updated_at) values (${id}, ${tenant.id}, 'Bench', 'sent', now(), now())`;
    }
    const start = new Date(Date.now() - 30 * 86_400_000);
    out([
      `engagement export bench: ${cpus().length} cores, load average ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}; ${fmt(SMALL)} and ${fmt(EVENTS)} events`,
    ]);
    let t0 = performance.now();
    await seed(sql, tenant.id, small, SMALL, start);
    await seed(sql, tenant.id, big, EVENTS, start);
    out([`   ${fmt(SMALL + EVENTS)} events inserted in ${fmt((performance.now() - t0) / 1000, 1)} s`]);

    t0 = performance.now();
    const a = await drain(sql, tenant.id, small, start);
    const b = await drain(sql, tenant.id, big, start);
    for (const [n, r] of [
      [SMALL, a],
      [EVENTS, b],
    ] as const) {
      if (r.rows !== n) throw new Error(`export of ${n} events wrote ${r.rows} rows`);
      out([
        `   ${fmt(n)} events: ${fmt(r.bytes / MB, 1)} MB of CSV in ${fmt(r.seconds, 1)} s (${fmt(r.rows / r.seconds)} rows/s); peak heap ${fmt(r.heapMb, 1)} ` +
          `MB, peak RSS ${fmt(r.rssMb, 1)} MB`,
      ]);
    }
    const growth = b.heapMb - a.heapMb;
    const met = growth <= GOAL.heapGrowthMb;
    out([
      `   peak heap growth from ${fmt(SMALL)} to ${fmt(EVENTS)} events: ${fmt(growth, 1)} MB (goal ≤ ${GOAL.heapGrowthMb} MB: ${met ? 'met' : 'NOT met'})`,
      '',
    ]);
    return { heapGrowthMb: growth, met };
  } finally {
    await sql?.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch(() => undefined);
    await admin.end();
  }
}
