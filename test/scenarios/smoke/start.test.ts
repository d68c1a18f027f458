// Smoke test: the real `mailpath start` on the embedded default (no DATABASE_URL), driven over HTTPS, stopped with SIGTERM.
import t from 'tap';
import { freePort } from '../../helpers/net.js';
import { shippedMailpathArgs } from '../../helpers/cli.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../../shared/kernel/paths.js';

const READY_ATTEMPTS = 360; // × 250 ms: at most 90 s for the first start (PGlite creates its cluster)
const EXIT_WAIT_MS = 30_000;
const PASSWORD_LINE = /Generated password \(shown once, change it after signing in\): (\S+)/g;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function https(port: number, method: string, path: string, options: { body?: unknown; token?: string } = {}): Promise<Answer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {};
  if (payload !== undefined) headers['content-type'] = 'application/json';
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, method, path, headers, rejectUnauthorized: false, agent: false, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end(payload);
  });
}

function httpGet(port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'GET', agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: undefined }));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
    req.end();
  });
}

interface Mailpath {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `mailpath start` (compiled, or from source through tsx: helpers/cli.ts) with a clean Mailpath environment: no DATABASE_URL, so the embedded default.
 */
function spawnMailpath(t: { teardown(fn: () => unknown): void }, env: Record<string, string>, options: { viaShell?: boolean } = {}): Mailpath {
  const base = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('MAILPATH_') && !k.startsWith('npm_') && k !== 'DATABASE_URL' && k !== 'NODE_OPTIONS'),
  );
  const args = shippedMailpathArgs('start');
  // The trailing commands keep the shell as the parent (no exec), as npm's `sh -c` does.
  const [command, argv] = options.viaShell ? ['/bin/sh', ['-c', `"${process.execPath}" ${args.join(' ')}; status=$?; exit $status`]] : [process.execPath, args];
  const child = spawn(command, argv, {
    cwd: projectRoot(),
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Polls the HTTPS port until the API answers (bounded), failing early if the process exits. */
async function waitUntilAnswering(mp: Mailpath, httpsPort: number): Promise<void> {
  let exited = false;
  void mp.exited.then(() => (exited = true));
  for (let attempt = 0; attempt < READY_ATTEMPTS; attempt++) {
    if (exited) throw new Error(`mailpath exited before answering:\n${mp.stderr()}\n${mp.stdout()}`);
    try {
      const res = await https(httpsPort, 'GET', '/api/v1/openapi.json');
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`mailpath did not answer on ${httpsPort}:\n${mp.stderr()}\n${mp.stdout()}`);
}

/** Sends SIGTERM and waits (bounded) for the exit. */
async function terminate(mp: Mailpath): Promise<{ code: number | null; signal: NodeJS.Signals | null } | 'timeout'> {
  mp.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), EXIT_WAIT_MS)));
  const result = await Promise.race([mp.exited, timeout]);
  clearTimeout(timer);
  return result;
}

t.test('mailpath start on the embedded default serves the API and stops cleanly on SIGTERM', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-smoke-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const httpsPort = await freePort();
  let httpPort = await freePort();
  for (let i = 0; i < 5 && httpPort === httpsPort; i++) httpPort = await freePort();
  const env = {
    MAILPATH_DATA_DIR: dataDir,
    MAILPATH_HTTPS_PORT: String(httpsPort),
    MAILPATH_HTTP_PORT: String(httpPort),
    // No operator port: an ephemeral one can be the very port a freePort() above handed out for another listener.
    MAILPATH_METRICS_PORT: 'off',
    // Every role runs, the MX too: on a free port rather than 2525.
    MAILPATH_MX_PORT: String(await freePort()),
    MAILPATH_BIND_HOST: '127.0.0.1',
    MAILPATH_LOG_LEVEL: 'info',
    MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
  };

  // First start: creates the embedded cluster, migrates, bootstraps the super-admin with a generated password.
  const first = spawnMailpath(t, env);
  await waitUntilAnswering(first, httpsPort);

  const doc = await https(httpsPort, 'GET', '/api/v1/openapi.json');
  t.equal(doc.status, 200, 'GET /api/v1/openapi.json over HTTPS');
  t.equal(doc.body.openapi, '3.0.3');
  t.equal(doc.body.servers?.[0]?.url, `https://localhost:${httpsPort}/api/v1`, 'public URL follows the HTTPS port');

  const tenant = { tenant_name: 'Smoke Co', tenant_slug: 'smoke-co', email: 'owner@smoke.test', password: 'Smoke-password-42' };
  const registered = await https(httpsPort, 'POST', '/api/v1/auth/register', { body: tenant });
  t.equal(registered.status, 201, 'register a tenant over HTTPS');
  t.equal(registered.body.ok, true);
  t.match(registered.headers['x-ratelimit-limit'], /^\d+$/, 'rate-limit headers present');
  const jwt = registered.body.data.token as string;

  const created = await https(httpsPort, 'POST', '/api/v1/api-keys', { token: jwt, body: { name: 'smoke key' } });
  t.equal(created.status, 201, 'create an API key');
  const key = created.body.data.key as string;
  t.match(key, /^mp_live_/);

  const who = await https(httpsPort, 'GET', '/api/v1/whoami', { token: key });
  t.equal(who.status, 200, '/whoami with the API key');
  t.equal(who.body.data.credential, 'api_key');
  t.equal(who.body.data.tenant.slug, 'smoke-co');
  t.equal(who.body.data.key.name, 'smoke key');

  const root = await https(httpsPort, 'GET', '/');
  t.equal(root.status, 302, 'the address a newcomer opens leads to the dashboard');
  t.equal(root.headers['location'], '/app/');
  const app = await https(httpsPort, 'GET', '/app/');
  t.equal(app.status, 200, 'the dashboard is built and served by `npm start`');
  t.match(app.headers['content-type'], /^text\/html/);
  const script = /<script type="module"[^>]* src="(\/app\/assets\/[^"]+\.js)"/.exec(String(app.body))?.[1];
  t.ok(script, "the page loads the app's script");
  t.equal((await https(httpsPort, 'GET', script ?? '/app/assets/missing.js')).status, 200, 'and the script is there');

  const redirect = await httpGet(httpPort, '/api/v1/whoami?x=1');
  t.equal(redirect.status, 301, 'the HTTP port answers 301');
  t.equal(redirect.headers['location'], `https://localhost:${httpsPort}/api/v1/whoami?x=1`);

  const stopped = await terminate(first);
  t.same(stopped, { code: 0, signal: null }, `exits 0 within ${EXIT_WAIT_MS / 1000}s of SIGTERM`);

  const logLines = first.stdout().split('\n').filter(Boolean);
  t.ok(logLines.length > 0, 'logs on stdout');
  t.ok(
    logLines.every((l) => {
      try {
        return typeof JSON.parse(l) === 'object';
      } catch {
        return false;
      }
    }),
    'every stdout line is a JSON log record',
  );
  t.ok(
    logLines.some((l) => JSON.parse(l).msg === 'mailpath stopped'),
    'logs the graceful stop',
  );

  const generated = [...first.stderr().matchAll(PASSWORD_LINE)].map((m) => m[1]!);
  t.equal(generated.length, 1, 'the generated super-admin password is printed on stderr at first start');
  const adminPassword = generated[0]!;
  t.notOk(first.stdout().includes(adminPassword), 'and never written to the JSON log');

  // Second start on the same data dir: the data is there, and no new password is printed.
  const second = spawnMailpath(t, env);
  await waitUntilAnswering(second, httpsPort);
  const login = await https(httpsPort, 'POST', '/api/v1/auth/login', { body: { email: tenant.email, password: tenant.password } });
  t.equal(login.status, 200, 'the tenant registered before the restart can sign in');
  const whoAgain = await https(httpsPort, 'GET', '/api/v1/whoami', { token: key });
  t.equal(whoAgain.status, 200, 'the API key still works after the restart');
  const admin = await https(httpsPort, 'POST', '/api/v1/auth/login', { body: { email: 'admin@mailpath.local', password: adminPassword } });
  t.equal(admin.status, 200, 'the printed super-admin password signs in');
  const adminWho = await https(httpsPort, 'GET', '/api/v1/whoami', { token: admin.body.data.token });
  t.equal(adminWho.body.data.user.is_super_admin, true);

  const stoppedAgain = await terminate(second);
  t.same(stoppedAgain, { code: 0, signal: null }, 'second run exits 0 on SIGTERM too');
  const total = [...first.stderr().matchAll(PASSWORD_LINE)].length + [...second.stderr().matchAll(PASSWORD_LINE)].length;
  t.equal(total, 1, 'the generated password is printed exactly once across both starts');

  // Third start as `npm start` runs it: below a shell that does not pass SIGTERM on. Stopping the
  // launcher must stop Mailpath too, not leave it running as an orphan on the ports and the data dir.
  const third = spawnMailpath(t, { ...env, npm_lifecycle_event: 'start' }, { viaShell: true });
  await waitUntilAnswering(third, httpsPort);
  const lockFile = join(dataDir, 'embedded.lock');
  const mailpathPid = Number(readFileSync(lockFile, 'utf8'));
  t.not(mailpathPid, third.child.pid, 'mailpath runs below the shell');
  t.teardown(() => {
    if (isAlive(mailpathPid)) process.kill(mailpathPid, 'SIGKILL');
  });
  t.not(await terminate(third), 'timeout', 'the shell exits on SIGTERM');
  // Judged by its output and the lock file, not the pid: an orphan may linger as a zombie where nothing reaps it.
  let orphanStopped = false;
  for (let i = 0; i < EXIT_WAIT_MS / 100 && !orphanStopped; i++) {
    orphanStopped = third.stdout().includes('"mailpath stopped"') && !existsSync(lockFile);
    if (!orphanStopped) await new Promise((r) => setTimeout(r, 100));
  }
  // On failure, what the orphan last logged says where its shutdown stalled.
  if (!orphanStopped) {
    const status = existsSync(`/proc/${mailpathPid}/status`)
      ? readFileSync(`/proc/${mailpathPid}/status`, 'utf8')
          .split('\n')
          .filter((l) => /^(State|PPid)/.test(l))
          .join(' ')
      : 'gone';
    t.comment(`mailpath ${mailpathPid} (${status}), shell ${third.child.pid}; output tail:\n${third.stdout().slice(-1500)}\n${third.stderr().slice(-2000)}`);
  }
  t.ok(orphanStopped, 'mailpath shuts down gracefully once its launcher is gone, releasing the data dir');
  await t.rejects(https(httpsPort, 'GET', '/api/v1/openapi.json'), 'and no longer listens');
});
