// Benchmark: the analytics queries (rollup, cohort retention, ESP scores) over a large event history, and event ingestion through the open and click
// tracking endpoints.
//
// Goals: p95 < 200 ms for each query over 10,000,000 events of 1,000 tenants; >= 5,000 tracked hits/s with every
// hit stored (each answered once it is durable: fsynced to the tracking spool in the data dir, the deployed default,
// or committed; the events stored are counted against the answers after the run).
// Peers measured in the same run: the rollup report computed from the raw events (what the rollup tables save), and a
// bare Fastify HTTPS server answering the same pixel (what the tracking endpoint costs beyond HTTP).
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides); creates and drops a database of its own.
// BENCH_ANALYTICS_EVENTS (default 10,000,000) events are generated in SQL (INSERT … SELECT generate_series), 500,000
// per statement; on a small machine that alone takes many minutes, so a smaller N may be given (the figures say which N).
// BENCH_ANALYTICS_SAMPLES (default 200) calls per query; BENCH_DURATION_S (default 10) seconds per ingestion target.
// bench/run.ts gives one bench 10 minutes unless BENCH_TIMEOUT_S says otherwise: the full 10M run needs it raised.
// BENCH_ANALYTICS_ONLY=ingestion skips the query data set (one tenant is made for the tracked sends, with an analyzed
// history of earlier sends: seedHistory), =queries skips the ingestion; BENCH_CONNECTIONS (50) sets the load's
// concurrent connections; BENCH_RECORDER_CONCURRENCY sets recorder.concurrency (batches in flight), and any
// MAILPATH_CONFIG__… variable given to the bench applies to the measured API; BENCH_CPU_PROFILE=<dir> writes a V8 CPU profile of this process (the API's
// thread) over the
// Mailpath ingestion run (open it in Chrome DevTools); BENCH_PG_STATEMENTS=1 (pg_stat_statements preloaded by the server)
// lists the statements of the Mailpath run with their execution and planning time per hit.
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import Fastify from 'fastify';
import postgres from 'postgres';
import { CohortRetention } from '../shared/engagement/analytics/cohort.js';
import { espScores } from '../shared/engagement/analytics/esp-scores.js';
import { ProviderClassifier } from '../shared/engagement/analytics/provider-classifier.js';
import { refreshStaleHours } from '../shared/engagement/analytics/queries.js';
import { rollupReport } from '../shared/engagement/analytics/rollup.js';
import { systemClock } from '../shared/kernel/clock.js';
import { configOverrides, loadConfig } from '../shared/config/index.js';
import { connect, type Sql } from '../shared/db/connection.js';
import { migrate } from '../shared/db/migrate.js';
import { createResolver } from '../shared/kernel/dns.js';
import { createLogger } from '../shared/kernel/log.js';
import { startMailpath } from '../main/runtime.js';
import { loadMasterKey } from '../shared/kernel/secrets/master-key.js';
import { loadTls } from '../shared/kernel/tls.js';
import { cpuSecondsOf, mainThreadCpuSeconds, threadCpuSeconds, threadSchedNs } from './lib/cpu.js';
import type { LoadRequest, LoadResult } from './lib/load-child.js';
import { pgStatements } from './lib/pg-statements.js';
import { clickUrls, linkBase, openUrl } from '../shared/engagement/tracking/link-tokens.js';
import { linkTokenKey } from '../shared/engagement/tracking/tokens.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';
import { TenantQueries } from '../shared/db/deadline.js';

const EVENTS = Math.max(10_000, Math.floor(Number(process.env['BENCH_ANALYTICS_EVENTS'] ?? 10_000_000)) || 10_000_000);
const SAMPLES = Math.max(20, Math.floor(Number(process.env['BENCH_ANALYTICS_SAMPLES'] ?? 200)) || 200);
const DURATION_S = Math.min(120, Math.max(1, Number(process.env['BENCH_DURATION_S'] ?? 10)));
const ONLY = process.env['BENCH_ANALYTICS_ONLY'] ?? '';
const CPU_PROFILE_DIR = process.env['BENCH_CPU_PROFILE'] ?? '';
/** recorder.concurrency for the API under test (config/tracking.yaml's value when unset). */
const RECORDER_CONCURRENCY = process.env['BENCH_RECORDER_CONCURRENCY'];
const TENANTS = 1_000;
const CONTACTS_PER_TENANT = 200;
const CHUNK = 500_000;
/** Concurrent keep-alive connections of the load generator (BENCH_CONNECTIONS): each holds one hit at a time. */
const CONNECTIONS = Math.max(1, Math.floor(Number(process.env['BENCH_CONNECTIONS'] ?? 50)) || 50);
const TRACKED_SENDS = 2_000;
/** BENCH_ANALYTICS_ONLY=ingestion: earlier sends (three events each) the events table holds before the run. */
const HISTORY_SENDS = 200_000;
const GOAL = { p95Ms: 200, hitsPerSec: 5_000 };
// Recipient domains: consumer ones (classified by name) and company ones (by MX; the bench resolver answers nothing,
// so they are `other`, cached like any failed look-up, and the measured calls are warm).
const DOMAINS = [
  'gmail.com',
  'outlook.com',
  'hotmail.com',
  'yahoo.com',
  'aol.com',
  'icloud.com',
  'proton.me',
  'fastmail.com',
  'googlemail.com',
  'live.com',
  'acme.example',
  'globex.example',
  'initech.example',
  'umbrella.example',
  'hooli.example',
  'stark.example',
  'wayne.example',
  'wonka.example',
  'tyrell.example',
  'cyberdyne.example',
];
const DAY = 86_400_000;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const out = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Seeds tenants, contacts (acquired over 12 weeks) and events (over 90 days) entirely in SQL. */
async function seed(sql: Sql, now: Date): Promise<string[]> {
  const tenants = await sql<{ id: string }[]>`
    insert into tenants (name, slug, plan_id) select 'Bench ' || g, 'bench-' || g, 'free' from generate_series(1, ${TENANTS}) g returning id`;
  const ids = tenants.map((t) => t.id);
  // Contact k of a tenant is u<k>@<domain k mod 20>, created within the last 12 weeks.
  await sql`
    insert into contacts (tenant_id, email, created_at, updated_at)
    select t.id, 'u' || k || '@' || (${DOMAINS}::text[])[1 + k % 20], ${now}::timestamptz - (k * 6 % 84) * interval '1 day' - k * interval '1 minute', ${now}
    from unnest(${ids}::uuid[]) as t(id), generate_series(0, ${CONTACTS_PER_TENANT - 1}) k`;
  const span = 90 * DAY;
  for (let from = 0; from < EVENTS; from += CHUNK) {
    const started = performance.now();
    // Event g: tenant g mod 1000, recipient contact (g / 1000) mod 200, time spread over 90 days; a mix of types
    // (40 % send, 35 % delivered, 12 % open (1 in 7 a machine's), 5 % click (1 in 9 a scanner's), 4 % bounce, 1 % complaint, 3 % deferred).
    await sql`
      insert into events (id, tenant_id, type, subtype, recipient, detail, occurred_at)
      select gen_random_uuid(), (${ids}::uuid[])[1 + g % ${TENANTS}],
        case when g % 100 < 40 then 'send' when g % 100 < 75 then 'delivered' when g % 100 < 87 then 'open' when g % 100 < 92 then 'click'
          when g % 100 < 96 then 'bounce' when g % 100 < 97 then 'complaint' else 'deferred' end,
        case when g % 100 between 92 and 95 then (case when g % 2 = 0 then 'hard' else 'soft' end) end,
        'u' || ((g / ${TENANTS}) % ${CONTACTS_PER_TENANT}) || '@' || (${DOMAINS}::text[])[1 + ((g / ${TENANTS}) % ${CONTACTS_PER_TENANT}) % 20],
        case when g % 100 between 75 and 86 then jsonb_build_object('machine', g % 7 = 0)
          when g % 100 between 87 and 91 then jsonb_build_object('scanner', g % 9 = 0, 'url', 'https://shop.example/')
          else '{}'::jsonb end,
        ${now}::timestamptz - ((g::float8 / ${EVENTS}) * ${span}) * interval '1 millisecond'
      from generate_series(${from + 1}::int, ${Math.min(EVENTS, from + CHUNK)}::int) g`;
    out([`  events ${fmt(Math.min(EVENTS, from + CHUNK))} / ${fmt(EVENTS)} (${fmt(CHUNK / ((performance.now() - started) / 1000))} rows/s)`]);
  }
  return ids;
}

/** Calls `run` SAMPLES times over random tenants (after 10 warm-up calls) and returns p50 / p95 in ms. */
async function latency(tenants: string[], run: (tenantId: string) => Promise<unknown>): Promise<{ p50: number; p95: number }> {
  const pick = () => tenants[Math.floor(Math.random() * tenants.length)]!;
  for (let i = 0; i < 10; i++) await run(pick());
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) {
    const started = performance.now();
    await run(pick());
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p95: percentile(times, 95) };
}

/** The 90-day hourly rollup computed from the raw events, as it would be without the rollup tables (the peer). */
async function rawRollup(sql: Sql, tenantId: string, since: Date, until: Date): Promise<unknown> {
  return sql`
    select date_trunc('hour', occurred_at, 'UTC') as start,
      count(*) filter (where type = 'send') as sent, count(*) filter (where type = 'bounce') as bounced,
      count(*) filter (where type = 'open' and not coalesce((detail ->> 'machine')::boolean, false)) as opened,
      count(*) filter (where type = 'click' and not coalesce((detail ->> 'scanner')::boolean, false)) as clicked,
      count(*) filter (where type = 'complaint') as complained
    from events where tenant_id = ${tenantId} and occurred_at >= ${since} and occurred_at <= ${until}
    group by 1 order by 1`;
}

async function queries(sql: Sql): Promise<{ met: boolean; tenants: string[] }> {
  const now = new Date();
  out([
    `analytics bench: ${fmt(EVENTS)} events of ${fmt(TENANTS)} tenants (goal size 10,000,000), ${SAMPLES} calls per query; ${cpus().length} cores, ` +
      `load average ${load()}`,
  ]);
  let started = performance.now();
  const tenants = await seed(sql, now);
  out([`  generated in ${fmt((performance.now() - started) / 1000, 1)} s`]);

  // As autovacuum would by then: the planner must know the events table is large.
  await sql`analyze events`;
  started = performance.now();
  let hours = 0;
  for (let batch = 0; batch < 1_000_000; batch++) {
    const n = await refreshStaleHours(sql, 5_000);
    hours += n;
    if (n === 0) break;
  }
  const refreshS = (performance.now() - started) / 1000;
  await sql`vacuum analyze`;
  const [sizes] = await sql<{ hourly: number; domain: number }[]>`
    select (select count(*) from analytics_hourly)::int as hourly, (select count(*) from analytics_domain_hourly)::int as domain`;
  out([
    `  rollup refresh (the worker's step, from empty): ${fmt(hours)} tenant-hours in ${fmt(refreshS, 1)} s; ${fmt(sizes!.hourly)} hourly rows, ` +
      `${fmt(sizes!.domain)} domain-hourly rows`,
  ]);

  const deps = { sql, clock: systemClock };
  const cohortDeps = { queries: new TenantQueries(sql, loadConfig({}).queries), clock: systemClock };
  const classifier = new ProviderClassifier(createResolver(['127.0.0.1:9'], { timeoutMs: 200, tries: 1 }), systemClock);
  const since90 = new Date(now.getTime() - 90 * DAY);
  const figures = [
    { name: 'rollup, 30 days by day', ...(await latency(tenants, (t) => rollupReport(deps, t, { granularity: 'day', includeMachine: false }))) },
    {
      name: 'rollup, 90 days by hour',
      ...(await latency(tenants, (t) => rollupReport(deps, t, { since: since90, until: now, granularity: 'hour', includeMachine: false }))),
    },
    // A new instance per call: the one-hour cache would otherwise answer every call after the first of a tenant.
    { name: 'cohort, 12 weeks, opened (uncached)', ...(await latency(tenants, (t) => new CohortRetention(cohortDeps).report(t, 'opened', 12))) },
    { name: 'cohort, 12 weeks, sent (uncached)', ...(await latency(tenants, (t) => new CohortRetention(cohortDeps).report(t, 'sent', 12))) },
    { name: 'esp-scores, 30 days', ...(await latency(tenants, (t) => espScores({ ...deps, classifier }, t))) },
  ];
  const peer = await latency(tenants, (t) => rawRollup(sql, t, since90, now));
  const met = figures.every((f) => f.p95 < GOAL.p95Ms);
  out([
    ...figures.map(
      (f) => `  ${f.name.padEnd(38)} p50 ${fmt(f.p50, 1).padStart(7)} ms   p95 ${fmt(f.p95, 1).padStart(7)} ms   ${f.p95 < GOAL.p95Ms ? 'ok' : 'OVER GOAL'}`,
    ),
    `  peer: 90-day hourly rollup from raw events  p50 ${fmt(peer.p50, 1).padStart(7)} ms   p95 ${fmt(peer.p95, 1).padStart(7)} ms`,
    `  goal p95 < ${GOAL.p95Ms} ms for each query: ${met ? 'goal met' : 'GOAL MISSED'}; load average after: ${load()}`,
  ]);
  return { met, tenants };
}

/** The load generator's figures (hits/s, latency, answers: 2xx and 3xx are answered hits, an open 200 and a click 302), and the servers'. */
interface Figures extends Omit<LoadResult, 'cpuSeconds'> {
  /** Main-thread CPU per answered request (the servers run on it; the load generator is a process of its own). */
  cpuUs: number;
  /** The whole process's CPU per answered request: the main thread, Mailpath's hit recorder thread, libuv's and V8's helpers. */
  processUs: number;
  /** CPU of the bench database's PostgreSQL backends per answered request. */
  pgCpuUs: number;
  /** Answered requests per transaction committed in the bench database meanwhile (the recorder's batch size). */
  hitsPerCommit: number;
  /** The load generator's CPU per answered request (its TLS and HTTP work). */
  loadUs: number;
  /**
   * Shares of the run (the load generator's start-up included) the servers' thread spent on a core and waiting for
   * one: the rest it was idle, waiting for the database or for requests.
   */
  mainOnCore: number;
  mainWaiting: number;
  /** The process's CPU per answered request by thread name (main, the recorder's worker, libuv's pool, V8's helpers). */
  threads: [string, number][];
}

/** Transactions committed in the bench database so far (as the statistics have been reported). */
async function commits(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select xact_commit::float8 as n from pg_stat_database where datname = current_database()`;
  return row!.n;
}

/** CPU seconds of the bench database's backends, by pid (the machine's other databases left out). */
async function backendCpu(sql: Sql): Promise<Map<number, number>> {
  const rows = await sql<{ pid: number }[]>`select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`;
  return new Map(rows.map((r) => [r.pid, cpuSecondsOf(r.pid)]));
}

/** autocannon in a process of its own (bench/lib/load-child.ts), each request to one of `paths` at random. */
function runLoad(request: LoadRequest): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./lib/load-child.ts', import.meta.url))], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => {
      try {
        if (code !== 0) throw new Error(`load generator exited with ${code}`);
        resolve(JSON.parse(output) as LoadResult);
      } catch (err) {
        reject(err);
      }
    });
    child.stdin.end(JSON.stringify(request));
  });
}

async function measure(sql: Sql, url: string, paths: string[], seconds: number): Promise<Figures> {
  const cpuBefore = mainThreadCpuSeconds();
  const processBefore = cpuSecondsOf(process.pid);
  const pgBefore = await backendCpu(sql);
  const commitsBefore = await commits(sql);
  const schedBefore = threadSchedNs(process.pid);
  const threadsBefore = threadCpuSeconds(process.pid);
  const startedAt = performance.now();
  const generated = await runLoad({ url, connections: CONNECTIONS, seconds, paths });
  const schedAfter = threadSchedNs(process.pid);
  const elapsedNs = (performance.now() - startedAt) * 1e6;
  const cpu = mainThreadCpuSeconds() - cpuBefore;
  const processCpu = cpuSecondsOf(process.pid) - processBefore;
  const threadsAfter = threadCpuSeconds(process.pid);
  const pgAfter = await backendCpu(sql);
  // Backends report their counts at most once a second: let the last ones in.
  await new Promise((r) => setTimeout(r, 1_500));
  const committed = (await commits(sql)) - commitsBefore;
  // A backend that connected during the run (a pool opens its connections on first use) used all its CPU in it.
  const pg = [...pgAfter].reduce((sum, [pid, s]) => sum + Math.max(0, s - (pgBefore.get(pid) ?? 0)), 0);
  const { cpuSeconds: loadCpu, ...figures } = generated;
  const { ok } = figures;
  const perHit = (cpuSeconds: number) => (ok > 0 ? (cpuSeconds * 1e6) / ok : 0);
  return {
    ...figures,
    cpuUs: perHit(cpu),
    processUs: perHit(processCpu),
    pgCpuUs: perHit(pg),
    hitsPerCommit: committed > 0 ? ok / committed : 0,
    loadUs: perHit(loadCpu),
    mainOnCore: (schedAfter.runNs - schedBefore.runNs) / elapsedNs,
    mainWaiting: (schedAfter.waitNs - schedBefore.waitNs) / elapsedNs,
    threads: [...threadsAfter]
      .map(([name, s]): [string, number] => [name, perHit(s - (threadsBefore.get(name) ?? 0))])
      .filter(([, us]) => us >= 1)
      .sort((a, b) => b[1] - a[1]),
  };
}

/** Runs `phase` under the V8 profiler when BENCH_CPU_PROFILE names a directory. */
async function profiled<T>(name: string, phase: () => Promise<T>): Promise<T> {
  if (!CPU_PROFILE_DIR) return phase();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await phase();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    mkdirSync(CPU_PROFILE_DIR, { recursive: true });
    const file = join(CPU_PROFILE_DIR, `${name}-${Date.now()}.cpuprofile`);
    writeFileSync(file, JSON.stringify(profile));
    out([`  CPU profile written to ${file}`]);
    session.disconnect();
  }
}

const pct = (share: number) => `${(share * 100).toFixed(0)}%`;

async function ingestion(dbUrl: string, sql: Sql, tenantId: string): Promise<boolean> {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-bench-'));
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const config = loadConfig({
      DATABASE_URL: dbUrl,
      MAILPATH_DATA_DIR: dataDir,
      MAILPATH_ROLES: 'api',
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_HTTPS_PORT: '0',
      MAILPATH_HTTP_PORT: '0',
      MAILPATH_LOG_LEVEL: 'warn',
      MAILPATH_ADMIN_PASSWORD: 'Bench-admin-password-1',
      MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
      // Not throttled: the bench measures the recording path, below every limit.
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__TRACKING: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: '1000000000',
      ...(RECORDER_CONCURRENCY ? { MAILPATH_CONFIG__TRACKING__RECORDER__CONCURRENCY: RECORDER_CONCURRENCY } : {}),
      // Configuration overrides given to the bench (e.g. MAILPATH_CONFIG__TRACKING__RECORDER__THREAD=false) apply to the
      // measured API: the config is loaded from this explicit set, not from the environment.
      ...configOverrides(process.env),
    });
    const mailpath = await startMailpath(config, createLogger('warn'));
    cleanups.push(() => mailpath.stop());
    const port = mailpath.roles.find((r) => r.name === 'api')!.details['httpsPort'] as number;
    const linkKey = linkTokenKey(await loadMasterKey(config));
    const base = linkBase(config.publicUrl);

    // Delivered sends with an open pixel and three links each: hits spread over many sends, as real traffic is.
    const sendIds = Array.from({ length: TRACKED_SENDS }, () => randomUUID());
    await sql`
      insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
      select id, ${tenantId}, 'api', 'live', 'delivered', 'news@bench.example', 'reader' || n || '@gmail.com', 'Bench', id || '@bench', 'b@bench.example',
             now() - interval '1 hour', now() - interval '1 hour'
      from unnest(${sendIds}::uuid[]) with ordinality as s(id, n)`;
    const paths = sendIds.flatMap((id) => {
      const click = clickUrls(base, linkKey, id, { tenantId, interstitial: false });
      return [openUrl(base, linkKey, id), click('https://shop.example/a', 3), click('https://shop.example/b', 3), click('https://shop.example/c', 3)].map((u) =>
        u.slice(base.length),
      );
    });

    const tls = await loadTls(config);
    const pixel = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    const bare = Fastify({ https: { key: tls.key, cert: tls.cert } });
    bare.get('/*', async (_request, reply) => reply.header('content-type', 'image/gif').header('cache-control', 'no-store').send(pixel));
    await bare.listen({ port: 0, host: '127.0.0.1' });
    cleanups.push(() => bare.close());
    const barePort = (bare.server.address() as { port: number }).port;

    out([
      `ingestion: ${CONNECTIONS} connections, HTTPS keep-alive, ${DURATION_S} s per target, recorder.concurrency ${config.tracking.recorder.concurrency} ` +
        `over ${fmt(paths.length)} distinct open and click URLs, each request to one at random; load average ${load()}`,
    ]);
    const before = Number((await sql`select count(*) as n from events where type in ('open', 'click') and send_id = any(${sendIds}::uuid[])`)[0]!['n']);
    await measure(sql, `https://127.0.0.1:${barePort}`, paths, 2);
    const bareFigures = await measure(sql, `https://127.0.0.1:${barePort}`, paths, DURATION_S);
    // BENCH_PG_STATEMENTS=1 (with pg_stat_statements preloaded by the server): the statements of the Mailpath run.
    const statements = process.env['BENCH_PG_STATEMENTS'] ? await pgStatements(sql) : undefined;
    const mp = await profiled('mailpath-ingestion', () => measure(sql, `https://127.0.0.1:${port}`, paths, DURATION_S));
    // Hits in flight when the measurement stopped are still answered (and stored) after it: let them finish.
    await new Promise((r) => setTimeout(r, 2_000));
    const stored =
      Number((await sql`select count(*) as n from events where type in ('open', 'click') and send_id = any(${sendIds}::uuid[])`)[0]!['n']) - before;
    // Each hit is answered only once durable (spooled or committed), so every answered hit must be stored; a few more may be
    // stored than counted (hits in flight at the cut-off, answered after autocannon stopped listening).
    const answered = mp.ok;
    const durable = stored >= answered && mp.errors === 0 && mp.failed === 0;
    const met = mp.reqPerSec >= GOAL.hitsPerSec && durable;
    const threadList = (f: Figures) => f.threads.map(([name, us]) => `${name} ${fmt(us)} µs`).join(', ');
    const row = (name: string, f: Figures) =>
      `  ${name.padEnd(34)} ${fmt(f.reqPerSec).padStart(8)} hits/s   p50 ${fmt(f.p50, 1).padStart(6)} ms   p99 ${fmt(f.p99, 1).padStart(6)} ms   ` +
      `CPU ${fmt(f.cpuUs).padStart(4)} µs/hit (process ${fmt(f.processUs)}, PostgreSQL ${fmt(f.pgCpuUs)})   (answered ${fmt(f.ok)}, 4xx/5xx ` +
      `${fmt(f.failed)}, errors ${f.errors})`;
    out([
      row('peer: bare Fastify, same pixel', bareFigures),
      row('Mailpath /o and /c (recorded)', mp),
      `  hits per committed transaction: ${fmt(mp.hitsPerCommit, 1)}`,
      `  the bench process's CPU per hit by thread ("node": Mailpath's recorder thread, libuv's pool and V8's helpers together): bare ` +
        `${threadList(bareFigures)}; Mailpath ${threadList(mp)}`,
      `  the load generator (autocannon's process): bare ${fmt(bareFigures.loadUs)} µs/hit, Mailpath ${fmt(mp.loadUs)} µs/hit; machine busy meanwhile: ` +
        `bare ${fmt(bareFigures.machineCores, 2)}, Mailpath ${fmt(mp.machineCores, 2)} of ${cpus().length} cores`,
      `  the servers' thread on a core / waiting for one: bare ${pct(bareFigures.mainOnCore)} / ${pct(bareFigures.mainWaiting)}, Mailpath ` +
        `${pct(mp.mainOnCore)} / ${pct(mp.mainWaiting)} of the run (idle the rest: waiting for PostgreSQL or for requests)`,
      `  events stored during the run: ${fmt(stored)} for ${fmt(answered)} answered hits (${durable ? 'every answered hit stored' : 'MISSING EVENTS'})`,
      `  ratio ${((mp.reqPerSec / bareFigures.reqPerSec) * 100).toFixed(1)}% of bare; goal >= ${fmt(GOAL.hitsPerSec)} hits/s with every hit stored: ` +
        `${met ? 'goal met' : 'GOAL MISSED'}; load average after: ${load()}`,
    ]);
    if (statements) await statements.print(answered, 'hit');
    return met;
  } finally {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => process.stderr.write(`cleanup: ${String(err)}\n`));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * Without the query data set the events table would start empty, and the plans the recorder's statements get on
 * their first executions (estimates of one row: any index looks as good) would be those of an empty table for the
 * whole run. A service has a history its planner knows: HISTORY_SENDS delivered sends of the last 90 days with a
 * delivery, an open and a click each, analyzed as autovacuum would have.
 */
async function seedHistory(sql: Sql, tenantId: string): Promise<void> {
  await sql`
    insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
    select gen_random_uuid(), ${tenantId}, 'api', 'live', 'delivered', 'news@bench.example', 'old' || g || '@gmail.com', 'Earlier', 'old' || g || '@bench',
           'b@bench.example', t, t
    from generate_series(1, ${HISTORY_SENDS}) g, lateral (select now() - (g % 90) * interval '1 day' - (g % 1440) * interval '1 minute' as t) at`;
  await sql`
    insert into events (id, tenant_id, type, send_id, message_id, recipient, detail, occurred_at)
    select gen_random_uuid(), s.tenant_id, k.type, s.id, s.message_id, s.to_email,
      case when k.type = 'click' then jsonb_build_object('url', 'https://shop.example/old', 'scanner', false, 'reasons', '[]'::jsonb) else '{}'::jsonb end,
      s.created_at + k.n * interval '1 minute'
    from sends s, (values (1, 'delivered'), (2, 'open'), (3, 'click')) as k(n, type)
    where s.tenant_id = ${tenantId}`;
  await sql`vacuum analyze sends, events`;
}

export default async function runAnalyticsBench(): Promise<{ queriesMet: boolean; ingestionMet: boolean }> {
  const dbName = benchDatabaseName();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  await admin.unsafe(`create database "${dbName}"`);
  const sql = connect(dbUrl.toString(), createLogger('warn'), { max: 4 });
  try {
    await migrate(sql);
    let queriesMet = true;
    let tenantId: string;
    if (ONLY === 'ingestion') {
      const [tenant] = await sql<{ id: string }[]>`insert into tenants (name, slug, plan_id) values ('Bench', 'bench', 'free') returning id`;
      tenantId = tenant!.id;
      await seedHistory(sql, tenantId);
    } else {
      const q = await queries(sql);
      queriesMet = q.met;
      tenantId = q.tenants[0]!;
    }
    const ingestionMet = ONLY === 'queries' ? true : await ingestion(dbUrl.toString(), sql, tenantId);
    return { queriesMet, ingestionMet };
  } finally {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch((err: unknown) => process.stderr.write(`drop database: ${String(err)}\n`));
    await admin.end();
  }
}
