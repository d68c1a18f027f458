// A data dir whose embedded database (PGlite) is already initialised and migrated, for tests about what runs on the
// embedded backend rather than about its first start.
//
// Why: a fresh PGlite data dir runs initdb in WebAssembly, about 4 s of CPU (twice that in a loaded suite), and then
// the migrations; starting on an initialised one takes 0.3 s. So the first test that asks builds one seed per
// migration set (under a lock, in the temp dir) and every test gets a copy of it. Tests of the first start itself
// (test/scenarios/smoke/start.test.ts, the persistence test of test/shared/db/embedded.test.ts) keep starting from an empty directory.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '../../shared/db/connection.js';
import { startEmbeddedPostgres } from '../../shared/db/embedded.js';
import { migrate } from '../../shared/db/migrate.js';
import { createLogger } from '../../shared/kernel/log.js';
import { projectRoot } from '../../shared/kernel/paths.js';
import { migrationSetHash } from './db.js';

const PREFIX = 'mailpath-pglite-seed-';
/** A lock older than this belongs to a builder that died: taken over. */
const LOCK_STALE_MS = 120_000;
const WAIT_STEP_MS = 200;

/** Changes with the migrations and with the PGlite release (its on-disk format). */
function seedName(): string {
  const pglite = JSON.parse(readFileSync(join(projectRoot(), 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8')) as { version: string };
  return `${PREFIX}${migrationSetHash(pglite.version)}`;
}

async function buildSeed(seed: string): Promise<void> {
  const building = `${seed}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  const log = createLogger('silent');
  const embedded = await startEmbeddedPostgres(building, log);
  try {
    const sql = connect(embedded.url, log, { max: 1, prepare: false });
    try {
      await migrate(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }
  } finally {
    await embedded.stop();
  }
  renameSync(building, seed);
}

/**
 * Seeds of other migration sets, and half-built ones a killed builder left, a day old: dropped (another checkout may
 * still be using a younger one).
 */
function dropStaleSeeds(keep: string): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX) || join(tmpdir(), name) === keep || name.endsWith('.lock')) continue;
    const path = join(tmpdir(), name);
    if (Date.now() - statSync(path).mtimeMs > 24 * 3600_000) rmSync(path, { recursive: true, force: true });
  }
}

async function ensureSeed(): Promise<string> {
  const seed = join(tmpdir(), seedName());
  const lock = `${seed}.lock`;
  // Bounded: a builder takes seconds; after LOCK_STALE_MS its lock is taken over.
  for (let waited = 0; waited < 2 * LOCK_STALE_MS && !existsSync(seed); waited += WAIT_STEP_MS) {
    try {
      mkdirSync(lock);
    } catch {
      const held = statSync(lock, { throwIfNoEntry: false });
      if (held && Date.now() - held.mtimeMs > LOCK_STALE_MS) rmSync(lock, { recursive: true, force: true });
      await new Promise((r) => setTimeout(r, WAIT_STEP_MS));
      continue;
    }
    try {
      if (!existsSync(seed)) await buildSeed(seed);
      dropStaleSeeds(seed);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  if (!existsSync(seed)) throw new Error(`the embedded database seed ${seed} was not built in time`);
  return seed;
}

/**
 * A new data dir holding a copy of the seed's embedded cluster: initialised, every migration applied, no rows of any
 * test; nothing else of a data dir (TLS pair, JWT secret). The caller deletes it, after stopping what runs on it.
 */
export async function seededDataDir(prefix = 'mailpath-embedded-'): Promise<string> {
  const seed = await ensureSeed();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(join(seed, 'pgdata'), join(dir, 'pgdata'), { recursive: true });
  return dir;
}
