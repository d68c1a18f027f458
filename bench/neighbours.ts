// Benchmark: noisy neighbours. Tenant A runs worst-case Liquid renders, clicks on a link its worst-case goal regex
// must judge, heavy segment previews and a large contact import, each at A's rate limits, while tenant B calls
// /whoami, sends tracked transactional mail and has its opens recorded. B's latencies and open-recording lag are
// measured alone (idle) and under A's load, and printed side by side.
//
// Goal: under A's load B's p99 (whoami and send) is at most 2x its idle p99, and every open of B is recorded within 1 s.
//
// Mailpath runs as deployed (bench/lib/deployment.ts: a front process with the api and scheduler roles, and an
// outbound process relaying to a loopback SMTP sink), on a database of its own. Everything is measured through the
// public HTTP API and the tracking links, so the bench runs against any version. A's load runs in a child process
// (bench/lib/neighbour-load.ts) and keeps to A's default per-key limits itself; the server's limits are raised, so
// that B can be sampled finely. Whatever a fenced server answers A (422, 429, 503), A carries on; its answers are
// counted by status and printed. The goal regex tried first is the issue's worst case; when it is refused at create,
// the next-worst pattern the server accepts is used (printed).
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides); creates and drops a database of its own.
// BENCH_PHASE_S (default 20) seconds per phase; BENCH_CONTACTS (200,000) contacts of A; BENCH_IMPORT_ROWS (50,000) rows per import;
// BENCH_A_WORK (render,click,preview,import) the kinds of A's work that run, to attribute a stall to one of them.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:https';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../shared/config/index.js';
import { pollUntil, startSmtpSink, type SmtpSink } from '../test/helpers/smtp-sink.js';
import { startDeployment, type Deployment } from './lib/deployment.js';
import { httpsJson, timedRequest } from './lib/http.js';
import type { NeighbourCounts, NeighbourLoad } from './lib/neighbour-load.js';
import { percentile } from './lib/percentile.js';
import { probeTenantB, trackingPath, type ProbeFigures, type ProbeOptions } from './lib/tenant-b-probe.js';

const PHASE_S = Math.min(120, Math.max(5, Number(process.env['BENCH_PHASE_S'] ?? 20)));
const CONTACTS = Math.max(1000, Number(process.env['BENCH_CONTACTS'] ?? 200_000));
const IMPORT_ROWS = Math.max(100, Number(process.env['BENCH_IMPORT_ROWS'] ?? 50_000));
/** Which of A's kinds of work run (comma-separated: render, click, preview, import; default all): attributes a stall to its cause. */
const A_WORK = new Set((process.env['BENCH_A_WORK'] ?? 'render,click,preview,import').split(',').map((w) => w.trim()));
const GOAL = { p99Ratio: 2, openMs: 1000 };
/** A's requests wait at most this long for an answer (then count as status 0). */
const A_TIMEOUT_MS = 15_000;
const UNLIMITED = '1000000000';
/** An open of B not in its events API this long after the pixel was fetched counts as not recorded (at least this lag). */
const OPEN_BOUND_MS = 10_000;

/** Each part loops past the render time limit: the most CPU one render request can ask for on today's code. */
const WORST_LIQUID = '{% for a in (1..3000) %}{% for b in (1..3000) %}{% assign x = b | plus: a %}{% endfor %}{% endfor %}';
/**
 * Goal regexes from worst to benign; the first the server accepts is used. The first is the issue's (cubic
 * backtracking on a URL of a's without a b); the second stays within RE2's repeat limit of 1000; the third is
 * quadratic with two unbounded quantifiers, which today's check allows.
 */
const GOAL_PATTERNS = ['a{0,2000}a{0,2000}a{0,2000}b', 'a{0,1000}a{0,1000}a{0,1000}b', 'a*a*b', 'a{0,100}a{0,100}a{0,100}b', '^https://shop\\.example/b'];
/** The link A's recipient clicks: as long as a goal regex is matched against (2,048 characters), no b in it. */
const CLICKED_URL = `https://shop.example/${'a'.repeat(2048 - 'https://shop.example/'.length)}`;
/** A's contacts have long first names, and its preview has 100 rules each scanning them for a string that is not there. */
const LONG_NAME = 'a'.repeat(100);
const HEAVY_DEFINITION = {
  op: 'OR',
  rules: Array.from({ length: 100 }, (_, i) => ({ type: 'field', field: 'first_name', operator: 'contains', value: `${'a'.repeat(50)}b${i}` })),
};

const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : 'n/a';
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const out = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);

/** A key of the tenant with every scope. */
const keyOf = async (port: number, token: string, name: string): Promise<string> =>
  (await httpsJson(port, 'POST', '/api/v1/api-keys', { name }, token)).data.key as string;

interface TenantA {
  tenantId: string;
  renderKey: string;
  previewKey: string;
  importKey: string;
  templateId: string;
  /** The pattern of A's goal, and the patterns refused before it. */
  pattern: string;
  refused: string[];
  clickPath: string;
  csvFile: string;
}

/** A's account: contacts, the worst-case template and goal, a delivered tracked message whose link its recipient clicks, an import file. */
async function setUpTenantA(d: Deployment, sink: SmtpSink, dir: string): Promise<TenantA> {
  const a = await d.addTenant('noisy');
  const port = d.apiPort;
  const [renderKey, previewKey, importKey, sendKey] = [
    await keyOf(port, a.token, 'render'),
    await keyOf(port, a.token, 'preview'),
    await keyOf(port, a.token, 'import'),
    await keyOf(port, a.token, 'send'),
  ];
  const seedStarted = performance.now();
  await d.sql`
    insert into contacts (tenant_id, email, status, first_name, last_name, created_at, updated_at)
    select ${a.tenantId}, 'reader' || g || '@noisy-dest.test', 'active', ${LONG_NAME} || g, 'Last' || g, now(), now()
    from generate_series(1, ${CONTACTS}::int) g`;
  await d.sql`analyze contacts`;
  out([`  A's ${fmt(CONTACTS)} contacts inserted in ${fmt((performance.now() - seedStarted) / 1000, 1)} s`]);
  const template = await httpsJson(
    port,
    'POST',
    '/api/v1/templates',
    { name: 'worst case', subject: WORST_LIQUID, body_html: WORST_LIQUID, body_text: WORST_LIQUID },
    renderKey,
  );
  const refused: string[] = [];
  let pattern = '';
  const agent = new Agent({ keepAlive: false, rejectUnauthorized: false });
  for (const candidate of GOAL_PATTERNS) {
    const created = await timedRequest(port, {
      method: 'POST',
      path: '/api/v1/goals',
      agent,
      token: sendKey,
      body: JSON.stringify({ name: `goal ${refused.length + 1}`, match_type: 'regex', match_value: candidate }),
      timeoutMs: 10_000,
    });
    if (created.status === 201) {
      pattern = candidate;
      break;
    }
    refused.push(`${candidate} (${created.status}: ${created.body.slice(0, 160)})`);
  }
  if (!pattern) throw new Error(`every goal pattern was refused: ${refused.join('; ')}`);
  const sent = await httpsJson(
    port,
    'POST',
    '/api/v1/transactional/send',
    {
      to: 'clicker@noisy-dest.test',
      from_email: `news@${a.domain}`,
      subject: 'Sale',
      body_html: `<html><body><a href="${CLICKED_URL}">Sale</a></body></html>`,
      track_clicks: true,
    },
    sendKey,
  );
  if (!sent.data.message_id) throw new Error("A's tracked send was not accepted");
  const message = await pollUntil("A's tracked message at the sink", () => sink.messages.find((m) => m.to.includes('clicker@noisy-dest.test')), 30_000);
  const clickPath = await trackingPath(message.raw, '/c/');
  const csvFile = join(dir, 'import.csv');
  writeFileSync(csvFile, ['email,first_name', ...Array.from({ length: IMPORT_ROWS }, (_, i) => `imported${i}@noisy-dest.test,${LONG_NAME}`)].join('\n'));
  agent.destroy();
  return { tenantId: a.tenantId, renderKey, previewKey, importKey, templateId: template.data.id as string, pattern, refused, clickPath, csvFile };
}

/** Runs A's load in its child process for `seconds`; resolves with its counts (bounded: the child is killed past its time). */
function runTenantA(port: number, a: TenantA, seconds: number): Promise<NeighbourCounts> {
  const perMinute = loadConfig({ DATABASE_URL: 'postgres://unused', MAILPATH_DATA_DIR: tmpdir() }).limits.rate_limits.per_minute;
  const request: NeighbourLoad = {
    port,
    seconds,
    timeoutMs: A_TIMEOUT_MS,
    work: (
      [
        [
          'render',
          {
            name: 'POST /templates/{id}/render (worst-case Liquid)',
            method: 'POST',
            path: `/api/v1/templates/${a.templateId}/render`,
            token: a.renderKey,
            body: '{}',
            perMinute: perMinute.read,
            concurrency: 4,
          },
        ],
        [
          'preview',
          {
            name: 'POST /segments/preview (100 scanning rules)',
            method: 'POST',
            path: '/api/v1/segments/preview',
            token: a.previewKey,
            body: JSON.stringify({ definition: HEAVY_DEFINITION }),
            perMinute: perMinute.read,
            concurrency: 4,
          },
        ],
        ['click', { name: `GET /c/ (goal regex ${a.pattern})`, method: 'GET', path: a.clickPath, perMinute: perMinute.tracking, concurrency: 4 }],
        [
          'import',
          {
            name: `POST /contacts/imports (${fmt(IMPORT_ROWS)} rows)`,
            method: 'POST',
            path: '/api/v1/contacts/imports',
            token: a.importKey,
            bodyFile: a.csvFile,
            contentType: 'text/csv',
            perMinute: perMinute.bulk,
            concurrency: 1,
          },
        ],
      ] as const
    )
      .filter(([kind]) => A_WORK.has(kind))
      .map(([, work]) => work),
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./lib/neighbour-load.ts', import.meta.url))], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), (seconds + A_TIMEOUT_MS / 1000 + 15) * 1000);
    let text = '';
    child.stdout.on('data', (c: Buffer) => (text += c.toString()));
    child.on('exit', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(JSON.parse(text.trim().split('\n').pop()!) as NeighbourCounts);
      else reject(new Error(`tenant A's load exited ${code}`));
    });
    child.stdin.end(JSON.stringify(request));
  });
}

interface Summary {
  whoami: { p50: number; p99: number; n: number };
  send: { p50: number; p99: number; n: number };
  open: { p50: number; p99: number; max: number; n: number; late: number };
}

function summarise(f: ProbeFigures, openBoundMs: number): Summary {
  const sorted = (xs: number[]) => [...xs].sort((x, y) => x - y);
  const [whoami, send] = [sorted(f.whoamiMs), sorted(f.sendMs)];
  // Opens not recorded within the bound count at the bound: the lag is at least that.
  const open = sorted([...f.openLagMs, ...Array.from({ length: f.openLate + f.undelivered }, () => openBoundMs)]);
  return {
    whoami: { p50: percentile(whoami, 50), p99: percentile(whoami, 99), n: whoami.length },
    send: { p50: percentile(send, 50), p99: percentile(send, 99), n: send.length },
    open: {
      p50: percentile(open, 50),
      p99: percentile(open, 99),
      max: open[open.length - 1] ?? Number.NaN,
      n: f.openLagMs.length,
      late: f.openLate + f.undelivered,
    },
  };
}

function report(
  idle: Summary,
  loaded: Summary,
  idleRaw: ProbeFigures,
  loadedRaw: ProbeFigures,
  a: TenantA,
  counts: NeighbourCounts,
  openBoundMs: number,
): void {
  const ms = (v: number, late = false) => `${late ? '>= ' : ''}${fmt(v, 1)} ms`;
  const rows: [string, number, number, boolean][] = [
    ['B GET /whoami p50', idle.whoami.p50, loaded.whoami.p50, false],
    ['B GET /whoami p99', idle.whoami.p99, loaded.whoami.p99, false],
    ['B POST /transactional/send p50', idle.send.p50, loaded.send.p50, false],
    ['B POST /transactional/send p99', idle.send.p99, loaded.send.p99, false],
    ['B open-recording lag p50', idle.open.p50, loaded.open.p50, true],
    ['B open-recording lag p99', idle.open.p99, loaded.open.p99, true],
    ['B open-recording lag max', idle.open.max, loaded.open.max, true],
  ];
  const cell = (v: number, capped: boolean) => ms(v, capped && v >= openBoundMs).padStart(16);
  out([
    `  ${'metric'.padEnd(32)} ${'idle'.padStart(16)} ${"under A's load".padStart(16)} ${'ratio'.padStart(8)}`,
    ...rows.map(([name, i, l, capped]) => `  ${name.padEnd(32)} ${cell(i, capped)} ${cell(l, capped)} ${`${fmt(l / i, 2)}x`.padStart(8)}`),
    `  samples: whoami ${fmt(idle.whoami.n)} / ${fmt(loaded.whoami.n)}, sends ${fmt(idle.send.n)} / ${fmt(loaded.send.n)}, opens recorded ` +
      `${fmt(idle.open.n)} / ${fmt(loaded.open.n)}, ` +
      `opens not recorded within ${fmt(openBoundMs / 1000)} s (or undelivered, or still waiting 15 s after the phase) ${idle.open.late} / ` +
      `${loaded.open.late} (idle / under load)`,
    `  B's failed answers: idle ${JSON.stringify(idleRaw.failures)}, under load ${JSON.stringify(loadedRaw.failures)}`,
    `  A's goal regex: ${a.pattern}${a.refused.length > 0 ? ` (refused at create first: ${a.refused.join('; ')})` : ' (the worst case, accepted)'}`,
    `  A's answers by status (0: no answer within ${fmt(A_TIMEOUT_MS / 1000)} s, or a socket error):`,
    ...Object.entries(counts).map(
      ([name, c]) =>
        `    ${name.padEnd(56)} ${JSON.stringify(c.statuses)}  slowest ${fmt(c.maxMs)} ms${c.firstError ? `  first failure: ${c.firstError}` : ''}`,
    ),
  ]);
  const whoamiMet = loaded.whoami.p99 <= GOAL.p99Ratio * idle.whoami.p99;
  const sendMet = loaded.send.p99 <= GOAL.p99Ratio * idle.send.p99;
  const opensMet = loaded.open.late === 0 && loaded.open.max <= GOAL.openMs;
  // A fence that answers B 429 or 503 quickly is no better than a slow answer.
  const bFailures = Object.values(loadedRaw.failures).reduce((n, c) => n + c, 0);
  const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
  out([
    `  goal: B whoami p99 under load <= ${GOAL.p99Ratio}x idle (${fmt(loaded.whoami.p99 / idle.whoami.p99, 2)}x): ${verdict(whoamiMet)}`,
    `  goal: B send p99 under load <= ${GOAL.p99Ratio}x idle (${fmt(loaded.send.p99 / idle.send.p99, 2)}x): ${verdict(sendMet)}`,
    `  goal: every B open under load recorded within ${fmt(GOAL.openMs)} ms (max ${ms(loaded.open.max, loaded.open.late > 0)}, ${loaded.open.late} ` +
      `not within ${fmt(openBoundMs / 1000)} s): ${verdict(opensMet)}`,
    `  B's answers under load all 2xx (${bFailures} failed): ${verdict(bFailures === 0)}`,
    `  ${whoamiMet && sendMet && opensMet && bFailures === 0 ? 'goal met' : 'GOAL MISSED'}; load average after ${load()}`,
  ]);
}

export default async function runNeighboursBench(): Promise<void> {
  const startedAt = performance.now();
  const elapsed = () => `${fmt((performance.now() - startedAt) / 1000)} s in`;
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-bench-neighbours-'));
  const teardowns: (() => unknown)[] = [];
  const sink = await startSmtpSink({ teardown: (fn) => teardowns.push(fn) });
  let deployment: Deployment | undefined;
  try {
    deployment = await startDeployment({
      name: 'neighbours',
      frontRoles: 'api,scheduler',
      sinkPort: sink.port,
      extraEnv: Object.fromEntries(
        ['SEND', 'READ', 'WRITE', 'BULK', 'PUBLIC', 'TRACKING']
          .map((c) => [`MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__${c}`, UNLIMITED])
          .concat([['MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC', UNLIMITED]]),
      ),
    });
    const port = deployment.apiPort;
    out([
      `neighbours bench: ${cpus().length} cores, load average ${load()}; built and started (${elapsed()}); setting up tenant A (${fmt(CONTACTS)} ` +
        `contacts) and tenant B ...`,
    ]);
    const a = await setUpTenantA(deployment, sink, dir);
    const probe = (tag: string, seconds: number): Omit<ProbeOptions, 'key'> => ({
      port,
      from: 'hello@bench.test',
      sink,
      seconds,
      whoamiEveryMs: 50,
      sendEveryMs: 500,
      pollEveryMs: 20,
      openBoundMs: OPEN_BOUND_MS,
      deliveryBoundMs: 15_000,
      graceMs: 15_000,
      tag,
    });
    const bKey = await keyOf(port, deployment.token, 'b');
    await probeTenantB({ ...probe('warmup', 3), key: bKey });
    out([`  phase 1 (${elapsed()}): B alone for ${PHASE_S} s (whoami every 50 ms, a tracked send every 500 ms, its open polled every 20 ms) ...`]);
    const idle = await probeTenantB({ ...probe('idle', PHASE_S), key: bKey });
    out([`  phase 2 (${elapsed()}): B as before while A renders, clicks, previews and imports at its limits for ${PHASE_S} s; load average ${load()} ...`]);
    const [loaded, counts] = await Promise.all([probeTenantB({ ...probe('loaded', PHASE_S), key: bKey }), runTenantA(port, a, PHASE_S)]);
    // Read from the database, not an API: whether the tracking recorder kept up with A's clicks (a pinned one has not).
    const [recorded] = await deployment.sql<{ opens: number; clicks: number }[]>`
      select count(*) filter (where type = 'open')::int as opens, count(*) filter (where type = 'click')::int as clicks from events
      where tenant_id = ${a.tenantId} or tenant_id = ${deployment.tenantId}`;
    out([`  measured (${elapsed()}); events stored by then: ${fmt(recorded!.clicks)} clicks of A, ${fmt(recorded!.opens)} opens of B`]);
    report(summarise(idle, OPEN_BOUND_MS), summarise(loaded, OPEN_BOUND_MS), idle, loaded, a, counts, OPEN_BOUND_MS);
  } finally {
    await deployment?.close();
    out([`  stopped and cleaned up (${elapsed()})`]);
    for (const fn of teardowns.reverse()) await Promise.resolve(fn()).catch(() => {});
    rmSync(dir, { recursive: true, force: true });
  }
}
