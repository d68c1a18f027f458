// Two real `mailpath start` processes on one database: a rate limit spent on one holds on the other.
import t from 'tap';
import { freePort } from '../helpers/net.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { projectRoot } from '../../shared/paths.js';
import { createTestDatabase } from '../helpers/db.js';

const READ_LIMIT = 10;
const SYNC_INTERVAL_MS = 200;
const agent = new Agent({ keepAlive: true, rejectUnauthorized: false });

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One HTTPS request to 127.0.0.1 (the certificate is self-signed), with a 5 s timeout. */
function https(port: number, method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<Res> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {};
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: `/api/v1${path}`, headers, agent, timeout: 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // keep the text
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Proc {
  child: ChildProcess;
  port: number;
  output: () => string;
  stop: () => Promise<void>;
}

/** Spawns `mailpath start` (api role only) on its own ports and data dir; `stop` kills it and removes the data dir. */
async function startProcess(databaseUrl: string, jwtSecret: string): Promise<Proc> {
  const [httpsPort, httpPort] = [await freePort(), await freePort()];
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-proc-'));
  const env: Record<string, string> = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? tmpdir(),
    DATABASE_URL: databaseUrl,
    MAILPATH_ROLES: 'api',
    MAILPATH_BIND_HOST: '127.0.0.1',
    MAILPATH_HTTPS_PORT: String(httpsPort),
    MAILPATH_HTTP_PORT: String(httpPort),
    MAILPATH_DATA_DIR: dataDir,
    MAILPATH_ADMIN_PASSWORD: 'Root-password-123',
    MAILPATH_JWT_SECRET: jwtSecret,
    MAILPATH_LOG_LEVEL: 'warn',
    MAILPATH_DB_POOL_SIZE: '4',
    MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: String(READ_LIMIT),
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__SYNC_INTERVAL_MS: String(SYNC_INTERVAL_MS),
  };
  const child = spawn(process.execPath, ['--import', 'tsx', 'shared/process/cli.ts', 'start'], {
    cwd: projectRoot(),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  return { child, port: httpsPort, output: () => output, stop };
}

/** Polls until the process answers over HTTPS (401 to an anonymous whoami), at most ~150 tries 100 ms apart. */
async function waitUntilUp(p: Proc): Promise<void> {
  for (let i = 0; i < 150; i++) {
    if (p.child.exitCode !== null) throw new Error(`mailpath exited with ${p.child.exitCode}:\n${p.output()}`);
    const ok = await https(p.port, 'GET', '/whoami').then(
      (r) => r.status === 401,
      () => false,
    );
    if (ok) return;
    await sleep(100);
  }
  throw new Error(`mailpath on port ${p.port} did not come up:\n${p.output()}`);
}

/** Polls the shared table until a bucket's current count reaches `n` (bounded). */
async function waitForStoredCount(sql: postgres.Sql, bucket: string, n: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < 50 && count < n; i++) {
    await sleep(SYNC_INTERVAL_MS / 2);
    const [row] = await sql<{ count: number }[]>`
      select coalesce(max(count), 0)::int as count from rate_limit_counters
      where bucket = ${bucket} and window_start = date_trunc('minute', now())`;
    count = row!.count;
  }
  return count;
}

t.test('one limit holds across two processes', async (t) => {
  const db = await createTestDatabase();
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  const procs: Proc[] = [];
  t.teardown(async () => {
    // Children first, so they never see their database vanish.
    await Promise.all(procs.map((p) => p.stop()));
    agent.destroy();
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  // One JWT secret for both, as any multi-process deployment needs (each data dir would otherwise generate its own).
  const jwtSecret = randomBytes(32).toString('hex');
  for (let i = 0; i < 2; i++) procs.push(await startProcess(db.url, jwtSecret));
  const [p1, p2] = procs as [Proc, Proc];
  await Promise.all([waitUntilUp(p1), waitUntilUp(p2)]);

  const reg = await https(p1.port, 'POST', '/auth/register', {
    body: { tenant_name: 'Two Procs', tenant_slug: 'two-procs', email: 'owner@two-procs.test', password: 'Correct-horse-42' },
  });
  t.equal(reg.status, 201, 'registered on process 1');
  const created = await https(p1.port, 'POST', '/api-keys', { token: reg.body.data.token, body: { name: 'shared' } });
  t.equal(created.status, 201, 'key created on process 1');
  const key: string = created.body.data.key;
  const bucket = `key:${created.body.data.id}:read`;

  // The whole exchange below (~1-2 s) must fall in one minute window; start it with at least 10 s of the minute left.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await sleep(60_000 - intoMinute + 100);
  const minute = Math.floor(Date.now() / 60_000);

  const spent = 6;
  for (let i = 1; i <= spent; i++) {
    const res = await https(p1.port, 'GET', '/whoami', { token: key });
    t.equal(res.status, 200, `process 1, request ${i}: 200`);
    if (i === spent) t.equal(res.headers['x-ratelimit-remaining'], String(READ_LIMIT - spent));
  }
  t.equal(await waitForStoredCount(sql, bucket, spent), spent, `process 1 synced its ${spent} requests to the database`);

  const onP2: number[] = [];
  let firstOnP2: Res | undefined;
  let refused: Res | undefined;
  for (let i = 0; i < READ_LIMIT; i++) {
    const res = await https(p2.port, 'GET', '/whoami', { token: key });
    firstOnP2 ??= res;
    onP2.push(res.status);
    if (res.status === 429) {
      refused = res;
      break;
    }
  }
  t.equal(firstOnP2!.headers['x-ratelimit-remaining'], String(READ_LIMIT - spent - 1), "process 2's first request already counts process 1's");
  t.same(onP2, [200, 200, 200, 200, 429], `process 2 admits only the remaining ${READ_LIMIT - spent}, then refuses`);
  t.equal(refused?.body.error, 'rate_limited');
  t.ok(Number(refused?.headers['retry-after']) >= 1, 'with Retry-After');

  // And back on process 1, once process 2's counts have been synced and pulled.
  t.equal(await waitForStoredCount(sql, bucket, READ_LIMIT), READ_LIMIT, 'the database holds the full limit');
  await sleep(3 * SYNC_INTERVAL_MS);
  const back = await https(p1.port, 'GET', '/whoami', { token: key });
  t.equal(back.status, 429, 'process 1 refuses too');
  t.equal(Math.floor(Date.now() / 60_000), minute, 'all within one minute window');
});
