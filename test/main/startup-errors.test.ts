// Start-up failures of the real `mailpath start`: a busy port names its variable, a second process on the data dir names the first, an unreachable database
// names its URL without the password; one line, no stack, a non-zero exit.
import t from 'tap';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeFatal } from '../../main/startup-errors.js';
import { ConfigError } from '../../shared/config/index.js';
import { listenFailure, OperationalError } from '../../shared/kernel/operational-errors.js';
import { createTestDatabase } from '../helpers/db.js';
import { seededDataDir } from '../helpers/embedded-data-dir.js';
import { https, spawnMailpath, startMailpathProcess } from '../helpers/mailpath-process.js';
import { freePort } from '../helpers/net.js';

const PORT_VARIABLES = [
  'MAILPATH_HTTPS_PORT',
  'MAILPATH_HTTP_PORT',
  'MAILPATH_MX_PORT',
  'MAILPATH_SUBMISSION_PORT',
  'MAILPATH_SUBMISSION_TLS_PORT',
  'MAILPATH_METRICS_PORT',
] as const;
const STACK_LINE = /^\s+at /m;

/** A free port for every listener, none the same (nor one `taken` holds already). */
async function ports(taken = new Set<number>()): Promise<Record<(typeof PORT_VARIABLES)[number], string>> {
  const out: Record<string, string> = {};
  for (const name of PORT_VARIABLES) {
    let port = await freePort();
    for (let i = 0; i < 10 && taken.has(port); i++) port = await freePort();
    taken.add(port);
    out[name] = String(port);
  }
  return out as Record<(typeof PORT_VARIABLES)[number], string>;
}

function occupy(port: number): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

function tempDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-start-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The last line of stderr (Node may print warnings before it). */
const lastLine = (text: string) => text.trimEnd().split('\n').at(-1);

t.test('describeFatal: expected failures in one line, anything else with its stack', async (t) => {
  t.same(describeFatal(new ConfigError('Invalid configuration: MAILPATH_HTTPS_PORT: expected a whole number')), {
    text: 'mailpath: Invalid configuration: MAILPATH_HTTPS_PORT: expected a whole number\n',
    status: 78,
  });
  t.same(describeFatal(new OperationalError('MAILPATH_MX_PORT 2525 is in use')), { text: 'mailpath: MAILPATH_MX_PORT 2525 is in use\n', status: 1 });
  const inUse = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE' });
  t.equal(listenFailure('MAILPATH_HTTP_PORT', 8080, '0.0.0.0', inUse).message, 'MAILPATH_HTTP_PORT 8080 is in use');
  t.match(listenFailure('MAILPATH_MX_PORT', 25, '0.0.0.0', Object.assign(new Error('x'), { code: 'EACCES' })).message, /^MAILPATH_MX_PORT 25 needs privileges/);
  t.match(
    listenFailure('MAILPATH_MX_PORT', 25, '10.9.9.9', Object.assign(new Error('x'), { code: 'EADDRNOTAVAIL' })).message,
    /^MAILPATH_BIND_HOST 10\.9\.9\.9 is not an address/,
  );
  const odd = new Error('something else');
  t.equal(listenFailure('MAILPATH_MX_PORT', 25, '0.0.0.0', odd), odd, 'another listen failure is left as it is');
  const fileError = Object.assign(new Error("EACCES: permission denied, mkdir '/data/tls'"), { code: 'EACCES', syscall: 'mkdir', path: '/data/tls' });
  t.same(describeFatal(fileError), { text: 'mailpath: cannot mkdir /data/tls: permission denied (EACCES)\n', status: 1 });
  const bug = new TypeError('cannot read properties of undefined');
  const report = describeFatal(bug);
  t.equal(report.status, 1);
  t.match(report.text, /^mailpath: fatal: TypeError: cannot read properties of undefined\n\s+at /, 'an unexpected error keeps its stack');
});

t.test('a busy port stops start-up with one line naming its variable, for every listener', async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  // One process per listener, all at once (each with a data dir of its own: a data dir takes one process), their
  // ports chosen together so no two processes are given the same one.
  const taken = new Set<number>();
  const envs: Record<(typeof PORT_VARIABLES)[number], string>[] = [];
  for (let i = 0; i < PORT_VARIABLES.length; i++) envs.push(await ports(taken));
  const runs = await Promise.all(
    PORT_VARIABLES.map(async (variable, i) => {
      const env = envs[i]!;
      const busy = await occupy(Number(env[variable]));
      const run = spawnMailpath({ ...env, DATABASE_URL: db.url, MAILPATH_DATA_DIR: tempDir(t), MAILPATH_ADMIN_PASSWORD: 'Root-password-123' });
      const exit = await run.exit().finally(() => busy.close());
      return { variable, port: env[variable], run, exit };
    }),
  );
  for (const { variable, port, run, exit } of runs) {
    t.same(exit, { code: 1, signal: null }, `${variable}: exits 1`);
    t.equal(lastLine(run.stderr()), `mailpath: ${variable} ${port} is in use`, `${variable}: named`);
    t.notMatch(run.stderr(), STACK_LINE, `${variable}: no stack`);
  }
});

t.test('a second process on the same data dir is refused, naming the first; after a crash the stale lock does not block', async (t) => {
  // Its embedded cluster already initialised: this is about the lock, not the first start (test/scenarios/smoke/start.test.ts).
  const dataDir = await seededDataDir();
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const { MAILPATH_SUBMISSION_PORT, MAILPATH_SUBMISSION_TLS_PORT } = await ports();
  const first = await startMailpathProcess({ MAILPATH_SUBMISSION_PORT, MAILPATH_SUBMISSION_TLS_PORT, MAILPATH_DATA_DIR: dataDir });
  t.teardown(() => first.kill());

  const second = spawnMailpath({ ...(await ports()), MAILPATH_DATA_DIR: dataDir });
  t.same(await second.exit(), { code: 1, signal: null }, 'the second process exits 1');
  t.match(lastLine(second.stderr()), `mailpath: the data dir ${dataDir} is in use by another mailpath process (pid ${first.child.pid})`);
  t.notMatch(second.stderr(), STACK_LINE, 'no stack');
  t.equal((await https(first.httpsPort, 'GET', '/whoami')).status, 401, 'the first one still serves');

  // A crash leaves the lock file behind, naming a process that is gone.
  await first.kill();
  const thirdPorts = await ports();
  const third = spawnMailpath({ ...thirdPorts, MAILPATH_DATA_DIR: dataDir, MAILPATH_ADMIN_PASSWORD: 'Root-password-123' });
  let up = false;
  for (let i = 0; i < 300 && !up && third.child.exitCode === null; i++) {
    up = await https(Number(thirdPorts.MAILPATH_HTTPS_PORT), 'GET', '/whoami').then(
      (r) => r.status === 401,
      () => false,
    );
    if (!up) await new Promise((r) => setTimeout(r, 200));
  }
  t.ok(up, `a new process starts on the data dir after the crash: ${third.stderr()}`);
  third.child.kill('SIGTERM');
  t.same(await third.exit(), { code: 0, signal: null }, 'and stops cleanly');
});

t.test('an unreachable database: one line with its address, without the password', async (t) => {
  const port = await freePort();
  const run = spawnMailpath({
    ...(await ports()),
    DATABASE_URL: `postgres://mailpath:hunter2@127.0.0.1:${port}/mail?sslmode=disable`,
    MAILPATH_DATA_DIR: tempDir(t),
  });
  t.same(await run.exit(), { code: 1, signal: null });
  t.equal(lastLine(run.stderr()), `mailpath: cannot reach the database at postgres://127.0.0.1:${port}/mail (ECONNREFUSED)`);
  t.notOk(run.stderr().includes('hunter2') || run.stdout().includes('hunter2'), 'the password is not printed');
  t.notMatch(run.stderr(), STACK_LINE);
});

t.test('a configuration error: one line, status 78', async (t) => {
  const run = spawnMailpath({ MAILPATH_HTTPS_PORT: 'eighty', MAILPATH_DATA_DIR: tempDir(t) });
  t.same(await run.exit(), { code: 78, signal: null });
  t.match(lastLine(run.stderr()), /^mailpath: Invalid configuration: MAILPATH_HTTPS_PORT: /);
  t.notMatch(run.stderr(), STACK_LINE);
});

t.test('a registration plan that is not a plan stops start-up with one line listing the plans, status 78', async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const run = spawnMailpath({ ...(await ports()), DATABASE_URL: db.url, MAILPATH_DATA_DIR: tempDir(t), MAILPATH_CONFIG__AUTH__REGISTRATION_PLAN: 'gold' });
  t.same(await run.exit(), { code: 78, signal: null });
  t.equal(lastLine(run.stderr()), "mailpath: auth.registration_plan: unknown plan 'gold' (plans: free, starter, pro, scale)");
  t.notMatch(run.stderr(), STACK_LINE);
});
