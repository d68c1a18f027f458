// Embedded PostgreSQL (PGlite over a loopback socket): data persists, one process per data dir, stale locks are taken over.
import t from 'tap';
import { childModule } from '../../helpers/cli.js';
import { seededDataDir } from '../../helpers/embedded-data-dir.js';
import { stopOnTeardown } from '../../helpers/net.js';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../../../shared/db/connection.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../../shared/db/embedded.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { projectRoot } from '../../../shared/kernel/paths.js';

const log = createLogger('silent');

function tempDataDir(t: { teardown(fn: () => unknown): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-embedded-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A data dir whose cluster is already initialised (for tests of the lock, not of the first start). */
async function seededTempDataDir(t: { teardown(fn: () => unknown): void }): Promise<string> {
  const dir = await seededDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the embedded server and stops it at teardown unless the test already did. */
async function start(t: { teardown(fn: () => unknown): void }, dataDir: string): Promise<EmbeddedPostgres> {
  return stopOnTeardown(t, await startEmbeddedPostgres(dataDir, log));
}

/** Runs startEmbeddedPostgres in a separate Node process; resolves with its exit code and output. */
function startInChild(dataDir: string): Promise<{ code: number | null; output: string }> {
  const { url: moduleUrl, nodeArgs } = childModule('shared/db/embedded.ts');
  const script = `
    const { startEmbeddedPostgres } = await import(${JSON.stringify(moduleUrl)});
    const quiet = { info() {}, warn() {}, error() {}, debug() {} };
    try {
      const e = await startEmbeddedPostgres(${JSON.stringify(dataDir)}, quiet);
      await e.stop();
      console.log('STARTED');
      process.exit(0);
    } catch (err) {
      console.log('REFUSED ' + err.message);
      process.exit(2);
    }`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, '--input-type=module', '-e', script], {
      cwd: projectRoot(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

t.test('data written before a stop is there after the next start', async (t) => {
  const dataDir = join(tempDataDir(t), 'nested', 'data');
  const first = await start(t, dataDir);
  t.match(first.url, /^postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres/, 'served on loopback');
  t.equal(statSync(dataDir).mode & 0o077, 0, 'a data dir created by Mailpath is closed to group and others');
  t.equal(statSync(join(dataDir, 'pgdata')).mode & 0o777, 0o700, 'pgdata is 0700 (PGlite writes its files 0666)');
  const sql1 = connect(first.url, log, { max: 1, prepare: false });
  await sql1`create table kept (id int primary key, note text)`;
  await sql1`insert into kept values (1, 'still here')`;
  await sql1.end({ timeout: 5 });
  await first.stop();
  t.notOk(existsSync(join(dataDir, 'embedded.lock')), 'the lock is released on stop');

  const second = await start(t, dataDir);
  const sql2 = connect(second.url, log, { max: 1, prepare: false });
  t.same(await sql2`select id, note from kept`, [{ id: 1, note: 'still here' }]);
  await sql2.end({ timeout: 5 });
  await second.stop();
});

t.test('a second start on a data dir in use is refused', async (t) => {
  const dataDir = await seededTempDataDir(t);
  const first = await start(t, dataDir);
  t.equal(readFileSync(join(dataDir, 'embedded.lock'), 'utf8'), String(process.pid), 'the lock names the owner');

  await t.rejects(startEmbeddedPostgres(dataDir, log), /already in use by this mailpath process/, 'refused within the same process');

  const other = await startInChild(dataDir);
  t.equal(other.code, 2, 'another process is refused');
  t.match(
    other.output,
    new RegExp(`REFUSED the data dir ${dataDir} is in use by another mailpath process \\(pid ${process.pid}\\)`),
    'the message names the holder',
  );
  t.match(other.output, /DATABASE_URL/, 'and says how to run several processes');

  // The first one is unaffected and still serving.
  const sql = connect(first.url, log, { max: 1, prepare: false });
  t.same(await sql`select 1 as one`, [{ one: 1 }]);
  await sql.end({ timeout: 5 });
  await first.stop();

  const after = await startInChild(dataDir);
  t.equal(after.code, 0, `once stopped, another process may start: ${after.output.trim()}`);
});

t.test('a stale lock left by a dead process is taken over', async (t) => {
  const dataDir = await seededTempDataDir(t);
  mkdirSync(dataDir, { recursive: true });
  const dead = spawnSync(process.execPath, ['-e', ''], { timeout: 30_000 });
  t.ok(dead.pid, 'a process that has exited');
  writeFileSync(join(dataDir, 'embedded.lock'), String(dead.pid));
  const embedded = await start(t, dataDir);
  t.equal(readFileSync(join(dataDir, 'embedded.lock'), 'utf8'), String(process.pid), 'the lock now names this process');
  await embedded.stop();

  // A lock naming our own pid that this process does not hold is stale too (a container restarts as pid 1).
  writeFileSync(join(dataDir, 'embedded.lock'), String(process.pid));
  const again = await start(t, dataDir);
  t.pass('own-pid stale lock taken over');
  await again.stop();

  // An empty or garbled lock file (a crash while writing it) does not block start-up forever.
  writeFileSync(join(dataDir, 'embedded.lock'), '');
  const third = await start(t, dataDir);
  await third.stop();
  t.notOk(existsSync(join(dataDir, 'embedded.lock')));
});
