// Benchmark: authenticated GET /api/v1/whoami over HTTPS keep-alive, metrics on, against a bare Fastify HTTPS hello-world (same certificate, same run).
//
// Goal: Mailpath serves at least 50% of the bare server's req/s, with p99 under 20 ms, at 50 connections.
// A third, informational target serves a whoami-sized JSON body with the same X-RateLimit-* headers from a bare
// Fastify route: the gap between it and hello-world is the response's size, the rest is Mailpath's own work.
// The load generator shares the machine's cores, so run it on an otherwise idle machine (the load is printed).
// The targets are measured in interleaved rounds (bare, sized, Mailpath, then Mailpath, sized, bare, ...), so a change
// in the machine's other load falls on all of them alike; the verdict takes the median of the rounds' ratios.
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides); creates and drops a database of its own.
// BENCH_ROUNDS (default 7) rounds of BENCH_DURATION_S seconds per target (default 4), after a 2 s warm-up of each.
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import Fastify from 'fastify';
import postgres from 'postgres';
import { loadConfig } from '../shared/config/index.js';
import { createLogger } from '../shared/kernel/log.js';
import { startMailpath } from '../main/runtime.js';
import { loadTls } from '../shared/kernel/tls.js';
import { httpsJson } from './lib/http.js';
import { mainThreadCpuSeconds } from './lib/cpu.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';

const DURATION_S = Math.min(120, Math.max(1, Number(process.env['BENCH_DURATION_S'] ?? 4)));
const ROUNDS = Math.min(21, Math.max(1, Math.floor(Number(process.env['BENCH_ROUNDS'] ?? 7))));
const WARMUP_S = 2;
const CONNECTIONS = 50;
const GOAL = { ratio: 0.5, p99Ms: 20 };

export interface Figures {
  reqPerSec: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** Main-thread CPU per request (the servers run on it; the load generator runs in a worker thread). */
  cpuUsPerRequest: number;
}

/** One autocannon run, in a worker thread so the load generator does not share the servers' event loop. */
async function measure(url: string, headers: Record<string, string>, seconds: number): Promise<Figures> {
  const cpuBefore = mainThreadCpuSeconds();
  const result = await autocannon({ url, headers, connections: CONNECTIONS, pipelining: 1, duration: seconds, workers: 1 });
  const cpuSeconds = mainThreadCpuSeconds() - cpuBefore;
  return {
    cpuUsPerRequest: result.requests.total > 0 ? (cpuSeconds * 1e6) / result.requests.total : 0,
    reqPerSec: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** The median of each figure over the rounds (the counts are summed: they say how much was measured). */
function medianOf(rounds: Figures[]): Figures {
  const m = (pick: (f: Figures) => number) => median(rounds.map(pick));
  const sum = (pick: (f: Figures) => number) => rounds.reduce((a, f) => a + pick(f), 0);
  return {
    reqPerSec: m((f) => f.reqPerSec),
    p50: m((f) => f.p50),
    p99: m((f) => f.p99),
    cpuUsPerRequest: m((f) => f.cpuUsPerRequest),
    requests: sum((f) => f.requests),
    non2xx: sum((f) => f.non2xx),
    errors: sum((f) => f.errors),
  };
}

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  rounds: Figures[];
}

/** Warms every target up once, then measures them in turn, round after round. */
async function interleaved(targets: Target[]): Promise<void> {
  for (const t of targets) {
    process.stdout.write(`  warm-up ${WARMUP_S} s: ${t.name}\n`);
    await measure(t.url, t.headers, WARMUP_S);
  }
  for (let round = 1; round <= ROUNDS; round++) {
    // Every other round runs backwards (ABC CBA ...), so a load that rises or falls steadily through a round does
    // not always favour the target measured first.
    const order = round % 2 ? targets : [...targets].reverse();
    for (const t of order) t.rounds.push(await measure(t.url, t.headers, DURATION_S));
    const line = targets.map((t) => `${fmt(t.rounds[round - 1]!.reqPerSec)} req/s ${fmt(t.rounds[round - 1]!.cpuUsPerRequest)} µs`);
    const [bare, , mailpath] = targets;
    const ratio = mailpath!.rounds[round - 1]!.reqPerSec / bare!.rounds[round - 1]!.reqPerSec;
    process.stdout.write(`  round ${round}/${ROUNDS}: ${line.join(' | ')}; Mailpath ${(ratio * 100).toFixed(1)}% of bare\n`);
  }
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

export default async function runApiBench(): Promise<{ bare: Figures; bareSized: Figures; mailpath: Figures; ratio: number; met: boolean }> {
  const dbName = benchDatabaseName();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-bench-'));
  await admin.unsafe(`create database "${dbName}"`);
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const config = loadConfig({
      DATABASE_URL: dbUrl.toString(),
      MAILPATH_DATA_DIR: dataDir,
      MAILPATH_ROLES: 'api',
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_HTTPS_PORT: '0',
      MAILPATH_HTTP_PORT: '0',
      // Metrics on (as in production), on a free operator port.
      MAILPATH_METRICS_PORT: '0',
      MAILPATH_LOG_LEVEL: 'warn',
      MAILPATH_ADMIN_PASSWORD: 'Bench-admin-password-1',
      MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
      // Not throttled: the bench measures the whole request path, rate limiter included, below every limit.
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: '1000000000',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC: '1000000000',
    });
    const log = createLogger('warn');
    const mailpath = await startMailpath(config, log);
    cleanups.push(() => mailpath.stop());
    const port = mailpath.roles.find((r) => r.name === 'api')!.details['httpsPort'] as number;

    const tls = await loadTls(config);
    const session = await httpsJson(port, 'POST', '/api/v1/auth/register', {
      tenant_name: 'Bench',
      tenant_slug: 'bench-tenant',
      email: 'owner@bench.test',
      password: 'Bench-password-42',
    });
    const created = await httpsJson(port, 'POST', '/api/v1/api-keys', { name: 'bench' }, session.data.token);
    const key: string = created.data.key;
    const whoamiBody = await httpsJson(port, 'GET', '/api/v1/whoami', undefined, key);

    const bare = Fastify({ https: { key: tls.key, cert: tls.cert } });
    bare.get('/hello', async () => ({ hello: 'world' }));
    bare.get('/sized', async (_request, reply) => {
      reply.header('X-RateLimit-Limit', 1_000_000_000).header('X-RateLimit-Remaining', 999_999_999).header('X-RateLimit-Reset', 30);
      return whoamiBody;
    });
    await bare.listen({ port: 0, host: '127.0.0.1' });
    cleanups.push(() => bare.close());
    const barePort = (bare.server.address() as { port: number }).port;

    const load = () =>
      loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    process.stdout.write(
      `api bench: ${CONNECTIONS} connections, HTTPS keep-alive, ${ROUNDS} interleaved rounds of ${DURATION_S} s per target; ${cpus().length} cores, ` +
        `load average ${load()}\n`,
    );
    const targets: Target[] = [
      { name: 'bare Fastify GET /hello', url: `https://127.0.0.1:${barePort}/hello`, headers: {}, rounds: [] },
      { name: 'bare Fastify, whoami-sized response', url: `https://127.0.0.1:${barePort}/sized`, headers: {}, rounds: [] },
      {
        name: 'Mailpath GET /api/v1/whoami (API key)',
        url: `https://127.0.0.1:${port}/api/v1/whoami`,
        headers: { authorization: `Bearer ${key}` },
        rounds: [],
      },
    ];
    await interleaved(targets);
    const [bareFigures, sizedFigures, mailpathFigures] = targets.map((t) => medianOf(t.rounds)) as [Figures, Figures, Figures];
    const ratios = targets[2]!.rounds.map((f, i) => f.reqPerSec / targets[0]!.rounds[i]!.reqPerSec);
    const cpuShares = targets[2]!.rounds.map((f, i) => targets[0]!.rounds[i]!.cpuUsPerRequest / f.cpuUsPerRequest);
    const worstP99 = Math.max(...targets[2]!.rounds.map((f) => f.p99));

    // The metrics were on throughout: the scrape shows the whoami requests counted under their route template.
    const scrape = mailpath.metricsPort ? await fetch(`http://127.0.0.1:${mailpath.metricsPort}/metrics`).then((r) => r.text()) : '';
    const counted = /mailpath_api_request_duration_seconds_count\{method="GET",route="\/api\/v1\/whoami",status="200"\} (\d+)/.exec(scrape)?.[1] ?? '0';
    // The median round's ratio (each round's two figures were measured moments apart), not a ratio of medians.
    const ratio = median(ratios);
    const met = ratio >= GOAL.ratio && mailpathFigures.p99 < GOAL.p99Ms && mailpathFigures.non2xx === 0 && mailpathFigures.errors === 0;
    const row = (name: string, f: Figures) =>
      `  ${name.padEnd(26)} ${fmt(f.reqPerSec).padStart(9)} req/s   p50 ${fmt(f.p50, 1).padStart(6)} ms   p99 ${fmt(f.p99, 1).padStart(6)} ms   CPU ` +
      `${fmt(f.cpuUsPerRequest).padStart(5)} µs/req   (${fmt(f.requests)} requests, non-2xx ${f.non2xx}, errors ${f.errors})`;
    process.stdout.write(
      [
        `  medians of ${ROUNDS} rounds:`,
        row('bare Fastify hello-world', bareFigures),
        row('bare, whoami-sized reply', sizedFigures),
        row('Mailpath whoami', mailpathFigures),
        `  metrics on: the operator port counted ${fmt(Number(counted))} whoami requests`,
        `  load average after: ${load()}`,
        // CPU per request hardly moves with the machine's other load, so it says more than req/s on a busy machine.
        `  main-thread CPU per request (medians): bare ${fmt(bareFigures.cpuUsPerRequest)} µs, Mailpath ${fmt(mailpathFigures.cpuUsPerRequest)} µs ` +
          `(bare's share ${(median(cpuShares) * 100).toFixed(1)}% of Mailpath's, median of the rounds)`,
        `  ratio per round: ${ratios.map((r) => `${(r * 100).toFixed(1)}%`).join(', ')}; Mailpath p99 per round: ` +
          `${targets[2]!.rounds.map((f) => fmt(f.p99, 1)).join(', ')} ms (worst ${fmt(worstP99, 1)})`,
        `  median ratio ${(ratio * 100).toFixed(1)}% of bare (goal >= ${GOAL.ratio * 100}%), Mailpath median p99 ${fmt(mailpathFigures.p99, 1)} ms ` +
          `(goal < ${GOAL.p99Ms} ms): ${met ? 'goal met' : 'GOAL MISSED'}`,
        '',
      ].join('\n'),
    );
    return { bare: bareFigures, bareSized: sizedFigures, mailpath: mailpathFigures, ratio, met };
  } finally {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => process.stderr.write(`cleanup: ${String(err)}\n`));
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch((err: unknown) => process.stderr.write(`drop database: ${String(err)}\n`));
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
