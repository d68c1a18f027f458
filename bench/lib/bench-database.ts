// Where the benches make their databases: one server (BENCH_DATABASE_URL, else the machine's at 127.0.0.1:5432) and one
// name prefix, which the runner (bench/run.ts) relies on to drop the database of a bench it had to kill.
import { randomBytes } from 'node:crypto';

export const ADMIN_URL = process.env['BENCH_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export const BENCH_DATABASE_PREFIX = 'mailpath_bench_';

/** A new database name for one bench run (`tag` names a bench's own, e.g. the audiences bench's). */
export function benchDatabaseName(tag?: string): string {
  return `${BENCH_DATABASE_PREFIX}${tag ? `${tag}_` : ''}${randomBytes(5).toString('hex')}`;
}
