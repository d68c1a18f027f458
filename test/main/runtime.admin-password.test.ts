// The generated super-admin password of a real `mailpath start`: not created by a start-up that fails, shown once after 'mailpath started' by the first that
// succeeds, never again.
import t from 'tap';
import { createServer, type Server } from 'node:net';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/db.js';
import { https, spawnMailpath, type SpawnedMailpath } from '../helpers/mailpath-process.js';
import { freePort } from '../helpers/net.js';

const PASSWORD_LINE = /^Generated password \(shown once, change it after signing in\): (\S+)$/gm;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 1, onnotice: () => {} });
const dir = mkdtempSync(join(tmpdir(), 'mailpath-admin-'));
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
  rmSync(dir, { recursive: true, force: true });
});

const env = async (): Promise<Record<string, string>> => ({
  DATABASE_URL: db.url,
  MAILPATH_DATA_DIR: join(dir, 'data'),
  MAILPATH_LOG_LEVEL: 'info',
  MAILPATH_HTTPS_PORT: String(await freePort()),
  MAILPATH_HTTP_PORT: String(await freePort()),
  // No operator port: an ephemeral one can be the very port a freePort() above handed out for another listener.
  MAILPATH_METRICS_PORT: 'off',
  MAILPATH_MX_PORT: String(await freePort()),
  MAILPATH_SUBMISSION_PORT: String(await freePort()),
  MAILPATH_SUBMISSION_TLS_PORT: String(await freePort()),
});

/** Waits (bounded) until `done` holds or the process exits. */
async function until(run: SpawnedMailpath, what: string, done: () => boolean | Promise<boolean>, output: () => string = run.stderr): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await done()) return;
    // Its last words say why (a port another test took meanwhile, say).
    if (run.child.exitCode !== null) throw new Error(`mailpath exited (${run.child.exitCode}) before ${what}:\n${output().slice(-2000)}`);
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const superAdmins = async () => (await sql<{ n: number }[]>`select count(*)::int as n from users where is_super_admin`)[0]!.n;

t.test('a failed start creates no super-admin; the next one shows the password once, after the started line; later starts never', async (t) => {
  // 1. The MX port is taken: start-up fails after the api role was up.
  const failedEnv = await env();
  const busy = await new Promise<Server>((resolve) => {
    const s = createServer().listen(Number(failedEnv['MAILPATH_MX_PORT']), '127.0.0.1', () => resolve(s));
  });
  const failed = spawnMailpath(failedEnv);
  const failedExit = await failed.exit().finally(() => busy.close());
  t.equal(failedExit.code, 1, 'the failed start exits 1');
  t.notMatch(failed.stderr(), PASSWORD_LINE, 'no password is shown');
  t.equal(await superAdmins(), 0, 'and no super-admin was created: nothing is lost');

  // 2. Everything comes up: the password follows 'mailpath started' (stdout and stderr in one file, in write order).
  const okEnv = await env();
  const outputFile = join(dir, 'second.out');
  const second = spawnMailpath(okEnv, { outputFile });
  const output = () => readFileSync(outputFile, 'utf8');
  await until(second, 'the password', () => [...output().matchAll(PASSWORD_LINE)].length > 0, output);
  const text = output();
  const passwords = [...text.matchAll(PASSWORD_LINE)].map((m) => m[1]!);
  t.equal(passwords.length, 1, 'shown once');
  const started = text.indexOf('"msg":"mailpath started"');
  t.ok(started >= 0 && started < text.search(PASSWORD_LINE), "after the 'mailpath started' line");
  const logLines = text.split('\n').filter((l) => l.startsWith('{'));
  t.notOk(
    logLines.some((l) => l.includes(passwords[0]!)),
    'never in the JSON log',
  );
  const login = await https(Number(okEnv['MAILPATH_HTTPS_PORT']), 'POST', '/auth/login', { body: { email: 'admin@mailpath.local', password: passwords[0] } });
  t.equal(login.status, 200, 'the shown password signs the super-admin in');
  second.child.kill('SIGTERM');
  t.same(await second.exit(), { code: 0, signal: null });

  // 3. A later start: the super-admin exists, nothing is shown.
  const thirdEnv = await env();
  const third = spawnMailpath(thirdEnv);
  await until(third, 'mailpath started', () => third.stdout().includes('"msg":"mailpath started"'));
  third.child.kill('SIGTERM');
  t.same(await third.exit(), { code: 0, signal: null });
  t.notMatch(third.stderr(), PASSWORD_LINE, 'no password on a later start');
  t.equal(await superAdmins(), 1);
});
