// A fresh PostgreSQL database per test file, cloned from a migrated template so each costs milliseconds.
import { createHash, randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { loadMigrations } from '../../shared/db/migrate.js';
import { migrate } from '../../shared/db/migrate.js';
import { startBoss } from '../../shared/jobs/boss.js';
import { createLogger } from '../../shared/kernel/log.js';

export const ADMIN_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TEMPLATE_LOCK = 74_615_099;

function urlFor(database: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

/** A hash of every migration (version and SQL), optionally with more that the artefact depends on: names that change whenever a migration does. */
export function migrationSetHash(...also: string[]): string {
  const hash = createHash('sha256');
  for (const part of also) hash.update(part);
  for (const m of loadMigrations()) hash.update(`${m.version}:${m.sql}`);
  return hash.digest('hex').slice(0, 12);
}

/** The template's name changes whenever a migration does, so a stale template is never reused. */
function templateName(): string {
  return `mailpath_tpl_${migrationSetHash()}`;
}

async function ensureTemplate(admin: postgres.Sql, name: string): Promise<void> {
  await admin`select pg_advisory_lock(${TEMPLATE_LOCK})`;
  try {
    const [exists] = await admin`select 1 from pg_database where datname = ${name}`;
    if (exists) return;
    const building = `${name}_building`;
    await admin.unsafe(`drop database if exists "${building}"`);
    await admin.unsafe(`create database "${building}"`);
    const sql = postgres(urlFor(building), { max: 2, onnotice: () => {} });
    try {
      await migrate(sql);
      const boss = await startBoss(sql, createLogger('silent'), { supervise: false });
      await boss.stop({ graceful: false, wait: true });
    } finally {
      await sql.end();
    }
    await admin.unsafe(`alter database "${building}" rename to "${name}"`);
    await admin.unsafe(`comment on database "${name}" is '${Date.now()}'`);
    // Templates of other migration sets (older checkouts, or other worktrees testing other branches at the same
    // time) are dropped once built a day ago: dropping them at once would pull a template from under a clone
    // another worktree is about to make (and have each worktree rebuild its own over and over).
    const stale = await admin<{ datname: string }[]>`
      select d.datname from pg_database d left join pg_shdescription s on s.objoid = d.oid and s.classoid = 'pg_database'::regclass
      where d.datname like 'mailpath_tpl_%' and d.datname <> ${name} and d.datname not like '%_building'
        and coalesce(case when s.description ~ '^[0-9]+$' then s.description::bigint end, 0) < ${Date.now() - 24 * 3600_000}`;
    for (const s of stale) await admin.unsafe(`drop database if exists "${s.datname}"`).catch(() => {});
  } finally {
    await admin`select pg_advisory_unlock(${TEMPLATE_LOCK})`;
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** How long a test database's files may go unchanged before a later test takes it for abandoned (no file runs this long). */
const ABANDONED_AFTER_HOURS = 6;
let sweptAbandoned = false;

/**
 * Drops, once per process, the test databases of runs that never reached their drop() (killed, timed out, a file run
 * alone with `node` against the machine's server): under `npm test` the throwaway server takes them along, the
 * machine's server keeps them. Only those nobody is connected to whose directory has not changed for hours (PostgreSQL
 * keeps no creation time; reading the directory needs a superuser, as the tests' role is: otherwise nothing is swept).
 */
async function dropAbandonedDatabases(admin: postgres.Sql): Promise<void> {
  if (sweptAbandoned) return;
  sweptAbandoned = true;
  try {
    const abandoned = await admin<{ datname: string }[]>`
      select d.datname from pg_database d
      where starts_with(d.datname, 'mp_test_')
        and not exists (select 1 from pg_stat_activity a where a.datid = d.oid)
        and (pg_stat_file('base/' || d.oid, true)).modification < now() - make_interval(hours => ${ABANDONED_AFTER_HOURS})`;
    for (const d of abandoned) await admin.unsafe(`drop database if exists "${d.datname}"`).catch(() => {});
  } catch {
    // not a superuser, or a database dropped meanwhile: left for another time
  }
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const template = templateName();
  const name = `mp_test_${randomBytes(6).toString('hex')}`;
  try {
    await ensureTemplate(admin, template);
    // Cloning fails while another clone of the same template is in progress; retry a few times.
    for (let attempt = 1; ; attempt++) {
      try {
        await admin.unsafe(`create database "${name}" template "${template}"`);
        break;
      } catch (err) {
        if (attempt >= 20 || !/being accessed by other users/.test((err as Error).message)) throw err;
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
    await dropAbandonedDatabases(admin);
  } finally {
    await admin.end();
  }
  return {
    name,
    url: urlFor(name),
    async drop() {
      const a = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      try {
        await a.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await a.end();
      }
    },
  };
}
