// Embedded PostgreSQL for a no-install start: PGlite (PostgreSQL in WebAssembly) served on a loopback socket.
import { mkdirSync, openSync, closeSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import type { Logger } from '../log.js';

export interface EmbeddedPostgres {
  url: string;
  maxConnections: number;
  stop(): Promise<void>;
}

// Mailpath itself uses one connection; the rest let an operator attach psql while it runs.
const MAX_CONNECTIONS = 4;

/** Refuses a second process on the same data dir: PGlite is single-writer and would be corrupted. */
function acquireDataDirLock(dir: string): () => void {
  const lockFile = join(dir, 'embedded.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockFile, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockFile, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(lockFile, 'utf8'));
      if (holder && holder !== process.pid && isAlive(holder)) {
        throw new Error(`the embedded database in ${dir} is in use by process ${holder}; set DATABASE_URL to run several processes`);
      }
      rmSync(lockFile, { force: true }); // stale lock of a process that died
    }
  }
  throw new Error(`cannot lock ${lockFile}`);
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
  mkdirSync(dir, { recursive: true });
  const release = acquireDataDirLock(dataDir);
  try {
    const db = await PGlite.create(dir);
    const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: MAX_CONNECTIONS });
    await server.start();
    const url = `postgres://postgres@${server.getServerConn()}/postgres?sslmode=disable`;
    log.info({ dir, address: server.getServerConn() }, 'embedded PostgreSQL (PGlite) started');
    return {
      url,
      maxConnections: MAX_CONNECTIONS,
      stop: async () => {
        await server.stop();
        await db.close();
        release();
      },
    };
  } catch (err) {
    release();
    throw err;
  }
}
