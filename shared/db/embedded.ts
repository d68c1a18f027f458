// Embedded PostgreSQL for a no-install start: PGlite (PostgreSQL in WebAssembly) served on a loopback socket.
import { chmodSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import type { Logger } from '../kernel/log.js';
import { OperationalError } from '../kernel/operational-errors.js';

export interface EmbeddedPostgres {
  url: string;
  maxConnections: number;
  stop(): Promise<void>;
}

// Mailpath itself uses one connection; the rest let an operator attach psql while it runs.
const MAX_CONNECTIONS = 4;

/** Data dirs whose lock this process holds: a second start in the same process is refused too. */
const heldHere = new Set<string>();

/**
 * Refuses a second process on the same data dir: PGlite is single-writer and would be corrupted.
 * The lock file holds the owner's pid; a lock whose process is gone is stale and taken over. A lock
 * naming our own pid is stale too unless this process holds it (a container restarts as pid 1 again).
 */
function acquireDataDirLock(dir: string): () => void {
  const lockFile = join(resolve(dir), 'embedded.lock');
  if (heldHere.has(lockFile)) {
    throw new OperationalError(`the data dir ${dir} is already in use by this mailpath process (its embedded database is open)`);
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    // Written aside then linked into place, so a reader never sees a lock file without its pid.
    const pending = `${lockFile}.${process.pid}`;
    writeFileSync(pending, String(process.pid), { mode: 0o600 });
    try {
      placeLock(pending, lockFile);
      heldHere.add(lockFile);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        heldHere.delete(lockFile);
        rmSync(lockFile, { force: true });
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder: number;
      try {
        holder = Number(readFileSync(lockFile, 'utf8'));
      } catch (readErr) {
        if ((readErr as NodeJS.ErrnoException).code === 'ENOENT') continue; // released meanwhile: try again
        throw readErr;
      }
      if (holder && holder !== process.pid && isAlive(holder)) {
        throw new OperationalError(
          `the data dir ${dir} is in use by another mailpath process (pid ${holder}); ` +
            `to run several processes, give them one DATABASE_URL (if no mailpath process is running, delete ${lockFile})`,
        );
      }
      rmSync(lockFile, { force: true }); // stale lock of a process that died
    } finally {
      rmSync(pending, { force: true });
    }
  }
  throw new Error(`cannot lock ${lockFile}`);
}

/** link() fails with EEXIST when the lock exists; filesystems without hard links fall back to an exclusive create. */
function placeLock(pending: string, lockFile: string): void {
  try {
    linkSync(pending, lockFile);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS') throw err;
    writeFileSync(lockFile, String(process.pid), { mode: 0o600, flag: 'wx' });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function startEmbeddedPostgres(dataDir: string, log: Logger): Promise<EmbeddedPostgres> {
  const dir = join(dataDir, 'pgdata');
  // PGlite writes its files world-writable (0666, ignoring the umask): only the owner may enter pgdata.
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const release = acquireDataDirLock(dataDir);
  try {
    // Extensions the migrations create must be loaded into the WebAssembly build up front.
    const db = await PGlite.create(dir, { extensions: { pg_trgm } });
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: MAX_CONNECTIONS });
    await server.start();
    const url = `postgres://postgres@${server.getServerConn()}/postgres?sslmode=disable`;
    log.info({ dir, address: server.getServerConn() }, 'embedded PostgreSQL (PGlite) started');
    return {
      url,
      maxConnections: MAX_CONNECTIONS,
      stop: async () => {
        try {
          await server.stop();
          await db.close();
        } finally {
          release();
        }
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}
