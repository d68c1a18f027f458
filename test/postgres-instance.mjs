// A throwaway PostgreSQL server for one test run: initdb into a fresh directory on tmpfs (else the temp dir), started on a free loopback
// port with durability off, stopped and deleted when the run ends.
//
// Why: every test file clones a database from the migrated template, and many clone one per subtest (about 550 clones
// and drops per run). Each clone creates ~1,500 files and each drop deletes them and forces a checkpoint; on the ext4
// disk of these machines the kernel's inode allocator (find_inode_bit, recently_deleted) then spent about a fifth of
// the machine's CPU, and drops waited on checkpoints that fsynced ~800 files. On tmpfs with fsync off the same work is
// cheap. It is the same PostgreSQL (the machine's own binaries), only nothing is kept: what is never kept need not be
// synced. Durability is not what the suite tests: SIGKILL tests kill Mailpath processes, never the database.
//
// Used only when TEST_DATABASE_URL is unset and the binaries are found; otherwise the run falls back to the server at
// 127.0.0.1:5432, as before. Set MAILPATH_TEST_PG=system to use that server anyway.
import { execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const START_TIMEOUT_MS = 30_000;

/** The newest installed server's bin directory: Debian's /usr/lib/postgresql/<major>/bin, else initdb on PATH. */
function findBinDir() {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const majors = readdirSync(debian)
      .filter((v) => existsSync(join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (majors.length > 0) return join(debian, majors[0], 'bin');
  }
  try {
    const initdb = execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim();
    return initdb ? join(initdb, '..') : null;
  } catch {
    return null;
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** initdb and postgres refuse to run as root: as root they run as the `postgres` user, which then owns the directory. */
function asServerUser(command, args) {
  if (process.getuid?.() !== 0) return [command, args];
  return ['runuser', ['-u', 'postgres', '--', command, ...args]];
}

async function waitReady(binDir, port, server) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`postgres exited with status ${server.exitCode}`);
    try {
      execFileSync(join(binDir, 'pg_isready'), ['-q', '-h', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
      return;
    } catch {
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`postgres did not accept connections within ${START_TIMEOUT_MS / 1000} s`);
}

const PREFIX = 'mailpath-test-pg-';
/** What a run's databases and WAL may take at their peak, with room to spare; a smaller /dev/shm (a container's default is 64 MiB) is not used. */
const TMPFS_NEEDED_BYTES = 2 * 1024 ** 3;

function roomyTmpfs() {
  try {
    const { bavail, bsize } = statfsSync('/dev/shm');
    return bavail * bsize >= TMPFS_NEEDED_BYTES ? '/dev/shm' : null;
  } catch {
    return null;
  }
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/**
 * Servers of earlier runs whose `npm test` is gone (killed before it could stop them): stopped and deleted, so a
 * crashed run leaves neither a process nor memory behind for long. A directory names its run's pid in `owner.pid`.
 */
function reapOrphans(binDir, base) {
  for (const name of readdirSync(base)) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = join(base, name);
    let owner = 0;
    try {
      owner = Number(readFileSync(join(dir, 'owner.pid'), 'utf8'));
    } catch {
      // No owner file: a directory being set up right now, or one from before owner files; left alone unless stale.
      if (Date.now() - statSync(dir).mtimeMs < 3600_000) continue;
    }
    if (owner && isAlive(owner)) continue;
    const dataDir = join(dir, 'data');
    if (existsSync(join(dataDir, 'postmaster.pid'))) {
      const [pgCtl, args] = asServerUser(join(binDir, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate', '-s']);
      try {
        execFileSync(pgCtl, args, { stdio: 'ignore' });
      } catch {
        // Not running (or not ours to stop): the directory goes either way.
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Starts the server; resolves to { url, stop } (url: the postgres database as superuser `postgres`), or to null with
 * the reason printed when it cannot, so the caller falls back to the machine's server.
 */
export async function startTestPostgres() {
  const binDir = findBinDir();
  if (!binDir) {
    console.log('# no PostgreSQL binaries found: the tests use the server at 127.0.0.1:5432');
    return null;
  }
  const base = roomyTmpfs() ?? tmpdir();
  reapOrphans(binDir, base);
  const dir = mkdtempSync(join(base, PREFIX));
  writeFileSync(join(dir, 'owner.pid'), String(process.pid));
  const dataDir = join(dir, 'data');
  let server;
  const stop = async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      // Immediate shutdown: nothing here is worth a checkpoint.
      const [pgCtl, args] = asServerUser(join(binDir, 'pg_ctl'), ['stop', '-D', dataDir, '-m', 'immediate', '-s']);
      try {
        execFileSync(pgCtl, args, { stdio: 'ignore' });
      } catch {
        server.kill('SIGKILL');
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    if (process.getuid?.() === 0)
      chownSync(
        dir,
        Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
        Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
      );
    const [initdb, initArgs] = asServerUser(join(binDir, 'initdb'), [
      '-D',
      dataDir,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--locale=C.UTF-8',
      '--no-sync',
    ]);
    execFileSync(initdb, initArgs, { stdio: 'ignore' });
    const port = await freePort();
    const [postgres, args] = asServerUser(join(binDir, 'postgres'), [
      '-D',
      dataDir,
      '-c',
      `port=${port}`,
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      `unix_socket_directories=${dir}`,
      '-c',
      'max_connections=300',
      '-c',
      'shared_buffers=256MB',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'autovacuum=off',
      '-c',
      'max_wal_size=1GB',
      '-c',
      'log_min_messages=fatal',
      '-c',
      'TimeZone=UTC',
    ]);
    server = spawn(postgres, args, { stdio: 'ignore' });
    await waitReady(binDir, port, server);
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
  } catch (err) {
    console.log(`# could not start a PostgreSQL server for this run (${err.message}): the tests use the server at 127.0.0.1:5432`);
    await stop();
    return null;
  }
}
