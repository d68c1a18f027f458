// Benchmark: how fast the dashboard is usable, in Debian's Chromium on loopback, beside the API explorer (swagger-ui,
// which the same server ships at /api/v1/docs) measured in the same run.
//
// Goal: the first page (sign-in) interactive in under 1 s on loopback, from a cold cache; its JS+CSS within 150 KB
// gzip (test/api/pages/web-app.test.ts holds the size; this bench measures the time).
// "Interactive": the page's own clock (performance.now(), from navigation start) when its form's email field is
// there and enabled; for the explorer, when its first operation is rendered. Each round opens a fresh browser context
// (empty cache, no cookies); rounds alternate dashboard and explorer, so the machine's other load falls on both.
// Also timed: a signed-in reload of the overview (the session cookie set), until its heading shows.
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides) and /usr/bin/chromium (installed with apt-get
// when run as root); creates and drops a database of its own. BENCH_ROUNDS (default 9).
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cpus, loadavg, tmpdir } from 'node:os';
import { chromium, type Browser, type Page } from 'playwright-core';
import postgres from 'postgres';
import { loadConfig } from '../shared/config/index.js';
import { createLogger } from '../shared/kernel/log.js';
import { projectRoot } from '../shared/kernel/paths.js';
import { startMailpath } from '../main/runtime.js';
import { CHROMIUM } from '../test/helpers/browser.js';
import { httpsJson } from './lib/http.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';
import { percentile } from './lib/percentile.js';

const ROUNDS = Math.min(51, Math.max(1, Math.floor(Number(process.env['BENCH_ROUNDS'] ?? 9))));
const GOAL_MS = 1000;
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

interface Visit {
  ms: number;
  /** Bytes over the wire (compressed), every response of the page. */
  bytes: number;
}

/** Navigates a fresh context to `url` and answers the page's clock when the `ready` selector's element is there and enabled. */
async function visit(browser: Browser, url: string, ready: string, prepare?: (page: Page) => Promise<void>): Promise<Visit> {
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 860 } });
  try {
    const page = await context.newPage();
    if (prepare) await prepare(page);
    let bytes = 0;
    page.on('response', async (response) => {
      const sizes = await response
        .request()
        .sizes()
        .catch(() => undefined);
      if (sizes) bytes += sizes.responseBodySize + sizes.responseHeadersSize;
    });
    await page.goto(url, { waitUntil: 'commit', timeout: 30_000 });
    // A function, not a string: the page's CSP forbids the eval a string predicate would need.
    const ms = await page
      .waitForFunction(
        (selector: string) => {
          const scope = globalThis as unknown as { document: { querySelector(s: string): { disabled?: boolean } | null }; performance: { now(): number } };
          const element = scope.document.querySelector(selector);
          return element && !element.disabled ? scope.performance.now() : false;
        },
        ready,
        { timeout: 30_000, polling: 'raf' },
      )
      .then((h) => h.jsonValue() as Promise<number>);
    await page.waitForLoadState('networkidle', { timeout: 30_000 });
    return { ms, bytes };
  } finally {
    await context.close();
  }
}

/** The p-th percentile of unsorted samples. */
const pct = (xs: number[], p: number) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    p,
  );
const median = (xs: number[]) => pct(xs, 50);
const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 0 });

export default async function runDashboardBench(): Promise<{ signInMs: number; explorerMs: number; met: boolean }> {
  // Plain JavaScript modules (the test runner and `npm run build` load them too), typed here by what is used.
  const root = projectRoot();
  const { ensureSystemPackages } = (await import(pathToFileURL(join(root, 'test', 'system-packages.mjs')).href)) as { ensureSystemPackages(): string[] };
  const { buildWeb } = (await import(pathToFileURL(join(root, 'web', 'build.mjs')).href)) as { buildWeb(outdir: string): Promise<unknown> };
  const missing = ensureSystemPackages().filter((p) => p === 'chromium');
  if (missing.length > 0) throw new Error('the dashboard bench needs Debian chromium: sudo apt-get install -y chromium');
  // The service run from source serves the bundle from dist/web (api/pages/web-app.ts), as `npm start` builds it.
  await buildWeb(join(root, 'dist', 'web'));

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
      MAILPATH_METRICS_PORT: 'off',
      MAILPATH_LOG_LEVEL: 'warn',
      MAILPATH_ADMIN_PASSWORD: 'Bench-admin-password-1',
      MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
      MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: '1000000',
    });
    const mailpath = await startMailpath(config, createLogger('warn'));
    cleanups.push(() => mailpath.stop());
    const port = mailpath.roles.find((r) => r.name === 'api')!.details['httpsPort'] as number;
    const origin = `https://127.0.0.1:${port}`;
    const owner = { email: 'bench@dashboard.localhost', password: 'Correct-horse-42' };
    await httpsJson(port, 'POST', '/api/v1/auth/register', { tenant_name: 'Bench', tenant_slug: 'bench-dashboard', ...owner });

    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    cleanups.push(() => browser.close());
    const signIn: Visit[] = [];
    const explorer: Visit[] = [];
    const overview: Visit[] = [];
    const signInReady = 'input[name=email]';
    const explorerReady = '.opblock';
    const signedIn = async (page: Page) => {
      // The session cookie, as the sign-in page gets it: POST /auth/session from the page's origin.
      await page.goto(`${origin}/app/sign-in`);
      await page.evaluate(
        `fetch('/api/v1/auth/session', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(${JSON.stringify(owner)}) })`,
      );
    };
    for (let round = 1; round <= ROUNDS; round++) {
      const pair =
        round % 2
          ? [() => visit(browser, `${origin}/app/sign-in`, signInReady), () => visit(browser, `${origin}/api/v1/docs`, explorerReady)]
          : [() => visit(browser, `${origin}/api/v1/docs`, explorerReady), () => visit(browser, `${origin}/app/sign-in`, signInReady)];
      const [a, b] = [await pair[0]!(), await pair[1]!()];
      const [dash, peer] = round % 2 ? [a, b] : [b, a];
      signIn.push(dash);
      explorer.push(peer);
      overview.push(await visit(browser, `${origin}/app/`, 'main h1', signedIn));
      process.stdout.write(
        `  round ${round}/${ROUNDS}: sign-in ${fmt(dash.ms)} ms, explorer ${fmt(peer.ms)} ms, signed-in overview ${fmt(overview.at(-1)!.ms)} ms\n`,
      );
    }
    const signInMs = median(signIn.map((v) => v.ms));
    const explorerMs = median(explorer.map((v) => v.ms));
    const met = signInMs < GOAL_MS;
    process.stdout.write(
      [
        '',
        `Dashboard (Chromium ${browser.version()}, ${cpus().length} cores, load ${loadavg()[0]!.toFixed(2)}), ${ROUNDS} cold rounds`,
        `  sign-in interactive: median ${fmt(signInMs)} ms, p90 ${fmt(
          pct(
            signIn.map((v) => v.ms),
            90,
          ),
        )} ms, ` + `${fmt(median(signIn.map((v) => v.bytes)) / 1024)} KB over the wire`,
        `  API explorer (peer): median ${fmt(explorerMs)} ms, p90 ${fmt(
          pct(
            explorer.map((v) => v.ms),
            90,
          ),
        )} ms, ` + `${fmt(median(explorer.map((v) => v.bytes)) / 1024)} KB over the wire`,
        `  signed-in overview: median ${fmt(median(overview.map((v) => v.ms)))} ms`,
        `  dashboard / explorer: ${(signInMs / explorerMs).toFixed(2)}×; goal sign-in < ${GOAL_MS} ms: ${met ? 'goal met' : 'GOAL MISSED'}`,
        '',
      ].join('\n'),
    );
    return { signInMs, explorerMs, met };
  } finally {
    for (const c of cleanups.reverse()) await c().catch((err: unknown) => process.stderr.write(`cleanup: ${String(err)}\n`));
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch((err: unknown) => process.stderr.write(`drop database: ${String(err)}\n`));
    await admin.end();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
