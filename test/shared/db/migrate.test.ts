// Migrations: each applied exactly once, safe when several processes migrate at once, all-or-nothing on failure.
import t from 'tap';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { loadMigrations, migrate, migrationsDir } from '../../../shared/db/migrate.js';
import { connect, type Sql } from '../../../shared/db/connection.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { ADMIN_URL, createTestDatabase } from '../../helpers/db.js';

interface Teardown {
  teardown(fn: () => unknown): void;
}

const log = createLogger('silent');

function pool(t: Teardown, url: string): Sql {
  const sql = connect(url, log, { max: 2 });
  t.teardown(() => sql.end({ timeout: 5 }));
  return sql;
}

/** A database with nothing in it (not cloned from the migrated template), dropped at teardown. */
async function blankDatabase(t: Teardown): Promise<string> {
  const name = `mp_test_blank_${randomBytes(6).toString('hex')}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  t.teardown(async () => {
    const a = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
    try {
      await a.unsafe(`drop database if exists "${name}" with (force)`);
    } finally {
      await a.end();
    }
  });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A temp migrations directory holding the given files. */
function migrationsIn(t: Teardown, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailpath-migrations-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

async function tableExists(sql: Sql, name: string): Promise<boolean> {
  const [row] = await sql<{ exists: boolean }[]>`select to_regclass(${name}) is not null as exists`;
  return row!.exists;
}

t.test('the shipped migrations load in order with distinct versions', async (t) => {
  const migrations = loadMigrations();
  const files = readdirSync(migrationsDir()).filter((f) => f.endsWith('.sql'));
  t.equal(migrations.length, files.length, 'every .sql file is a migration');
  t.ok(migrations.length > 0);
  const versions = migrations.map((m) => m.version);
  t.same(
    versions,
    [...versions].sort((a, b) => a - b),
    'sorted by version',
  );
  t.equal(new Set(versions).size, versions.length, 'no duplicate version');
});

t.test('loadMigrations sorts numerically, ignores other files and refuses duplicate versions', async (t) => {
  const dir = migrationsIn(t, {
    '10_ten.sql': 'select 10;',
    '2_two.sql': 'select 2;',
    '003_three.sql': 'select 3;',
    'README.md': 'not a migration',
    '004_Bad_Name.sql': 'not matched: upper case',
  });
  t.same(
    loadMigrations(dir).map((m) => [m.version, m.name]),
    [
      [2, 'two'],
      [3, 'three'],
      [10, 'ten'],
    ],
  );
  const dup = migrationsIn(t, { '001_a.sql': 'select 1;', '1_b.sql': 'select 1;' });
  t.throws(() => loadMigrations(dup), /two migrations share version 1/);
});

t.test('on a blank database every shipped migration is applied once', async (t) => {
  const sql = pool(t, await blankDatabase(t));
  const all = loadMigrations().map((m) => m.version);
  t.same(await migrate(sql), all, 'first run applies every migration');
  t.same(await migrate(sql), [], 'second run applies nothing');
  const rows = await sql<{ version: number; n: number }[]>`select version, count(*)::int as n from schema_migrations group by version order by version`;
  t.same(
    rows.map((r) => r.version),
    all,
    'one schema_migrations row per migration',
  );
  t.ok(rows.every((r) => r.n === 1));
  t.ok(await tableExists(sql, 'tenants'), 'the foundation schema exists');
});

t.test('a database cloned by createTestDatabase is already fully migrated', async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const sql = pool(t, db.url);
  t.same(await migrate(sql), [], 'nothing pending');
});

t.test('two processes migrating at once apply each migration exactly once', async (t) => {
  const url = await blankDatabase(t);
  const dir = migrationsIn(t, {
    '001_first.sql': 'create table mig_first (id int primary key); insert into mig_first values (1);',
    '002_second.sql': 'create table mig_second (id int primary key); select pg_sleep(0.2); insert into mig_second values (2);',
    '003_third.sql': 'alter table mig_first add column note text;',
  });
  const migrations = loadMigrations(dir);
  // Separate pools stand in for separate processes: separate sessions contending for the advisory lock.
  const a = pool(t, url);
  const b = pool(t, url);
  const c = pool(t, url);
  const results = await Promise.all([migrate(a, migrations), migrate(b, migrations), migrate(c, migrations)]);
  const applied = results.flat().sort((x, y) => x - y);
  t.same(applied, [1, 2, 3], 'each version applied by exactly one of them');
  t.equal(results.filter((r) => r.length > 0).length, 1, 'one process did all the work, the others found nothing to do');
  const [row] = await a<{ n: number }[]>`select count(*)::int as n from mig_first`;
  t.equal(row!.n, 1, 'the data statement ran once');
  const rows = await a<{ version: number }[]>`select version from schema_migrations order by version`;
  t.same(
    rows.map((r) => r.version),
    [1, 2, 3],
  );
});

t.test('a failing migration rolls back the whole run', async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const sql = pool(t, db.url);
  const before = (await sql<{ version: number }[]>`select version from schema_migrations order by version`).map((r) => r.version);

  const good = 'create table mig_good (id int primary key); insert into mig_good values (1);';
  const dir = migrationsIn(t, {
    '9001_good.sql': good,
    '9002_bad.sql': 'create table mig_bad (id int primary key); select 1 / 0;',
  });
  await t.rejects(migrate(sql, loadMigrations(dir)), /division by zero/);
  t.notOk(await tableExists(sql, 'mig_good'), 'the migration before the failing one is rolled back too');
  t.notOk(await tableExists(sql, 'mig_bad'), 'the failing migration left nothing');
  const after = (await sql<{ version: number }[]>`select version from schema_migrations order by version`).map((r) => r.version);
  t.same(after, before, 'no version recorded');

  // Fixed, the next run applies both.
  writeFileSync(join(dir, '9002_bad.sql'), 'create table mig_bad (id int primary key);');
  t.same(await migrate(sql, loadMigrations(dir)), [9001, 9002]);
  t.ok(await tableExists(sql, 'mig_good'));
  t.ok(await tableExists(sql, 'mig_bad'));
  t.same(await migrate(sql, loadMigrations(dir)), [], 'and the run after that nothing');
});
