// Applies the numbered SQL files in shared/db/migrations once each, under a lock, so concurrent starts cannot race.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../kernel/paths.js';
import type { Sql } from './connection.js';

/** Arbitrary constant naming Mailpath's migration lock among advisory locks. */
const MIGRATION_LOCK_KEY = 74_615_011;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export function migrationsDir(): string {
  return join(projectRoot(), 'shared', 'db', 'migrations');
}

/** Reads NNN_name.sql files in version order; a duplicate version is a packaging error. */
export function loadMigrations(dir = migrationsDir()): Migration[] {
  const migrations = readdirSync(dir)
    .map((file) => /^(\d+)_([a-z0-9_-]+)\.sql$/.exec(file))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ version: Number(m[1]), name: m[2]!, sql: readFileSync(join(dir, m[0]), 'utf8') }))
    .sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version) {
      throw new Error(`two migrations share version ${migrations[i]!.version}`);
    }
  }
  return migrations;
}

/**
 * Applies every pending migration in one transaction holding an advisory lock:
 * a second process starting at the same moment waits, then finds nothing to do.
 * Returns the versions applied.
 */
export async function migrate(sql: Sql, migrations = loadMigrations()): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`;
    await tx`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`;
    const done = new Set((await tx<{ version: number }[]>`select version from schema_migrations`).map((r) => r.version));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await tx`insert into schema_migrations (version, name) values (${m.version}, ${m.name})`;
      applied.push(m.version);
    }
    return applied;
  });
}
