// A database of its own for testing one migration on data from before it: created and migrated up to the migration
// before, dropped at teardown; apply() then runs the migration under test alone.
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { connect, type Sql } from '../../shared/db/connection.js';
import { loadMigrations, migrate } from '../../shared/db/migrate.js';
import { createLogger } from '../../shared/kernel/log.js';
import type { TestLike } from './app.js';
import { ADMIN_URL } from './db.js';

export interface DatabaseBeforeMigration {
  sql: Sql;
  /** Runs migration `version` alone; answers the versions it applied. */
  apply(): Promise<number[]>;
}

export async function databaseBefore(t: TestLike, version: number): Promise<DatabaseBeforeMigration> {
  const name = `mp_test_migration_${version}_${randomBytes(6).toString('hex')}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const sql = connect(url.toString(), createLogger('silent'), { max: 2 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });
  const all = loadMigrations();
  await migrate(
    sql,
    all.filter((m) => m.version < version),
  );
  return {
    sql,
    apply: () =>
      migrate(
        sql,
        all.filter((m) => m.version === version),
      ),
  };
}
