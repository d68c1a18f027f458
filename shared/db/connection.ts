// Opens the PostgreSQL connection pool: DATABASE_URL, or the embedded PGlite server in the data dir.
import postgres from 'postgres';
import type { Config } from '../config/index.js';
import type { Logger } from '../kernel/log.js';
import { OperationalError } from '../kernel/operational-errors.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded.js';

export type Sql = postgres.Sql;
/** A pool or a transaction handle: what every query function in shared/ takes. */
export type Queryable = postgres.Sql | postgres.TransactionSql;

export interface Database {
  sql: Sql;
  url: string;
  embedded: EmbeddedPostgres | undefined;
  close(): Promise<void>;
}

export interface ConnectOptions {
  max?: number;
  /** Off for the embedded backend: its one session outlives our connections and would keep stale names. */
  prepare?: boolean;
}

export function connect(url: string, log: Logger, options: ConnectOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    prepare: options.prepare ?? true,
    idle_timeout: 60,
    connect_timeout: 15,
    onnotice: (notice) => log.debug({ notice: notice.message }, 'postgres notice'),
    connection: { application_name: 'mailpath' },
    types: {
      // A string bound to a json/jsonb parameter is taken as JSON text already (as the pg driver does,
      // which pg-boss relies on); anything else is serialized. Without this strings are encoded twice.
      json: {
        to: 3802,
        from: [114, 3802],
        serialize: (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value)),
        parse: (text: string) => JSON.parse(text),
      },
    },
  });
}

/** Opens the database named by config, starting the embedded server when DATABASE_URL is unset. */
export async function openDatabase(config: Config, log: Logger): Promise<Database> {
  if (config.databaseUrl) {
    const sql = connect(config.databaseUrl, log, { max: config.dbPoolSize });
    // One query now: a database that cannot be reached or used is said so at once, in one line.
    try {
      await sql`select 1`;
    } catch (err) {
      await sql.end({ timeout: 1 }).catch(() => undefined);
      throw databaseFailure(config.databaseUrl, err);
    }
    return { sql, url: config.databaseUrl, embedded: undefined, close: () => sql.end({ timeout: 5 }) };
  }
  const embedded = await startEmbeddedPostgres(config.dataDir, log);
  // PGlite is one session: statements of concurrent connections would interleave in it, so the
  // pool holds a single connection (hence: never await a second query while a transaction is open).
  const sql = connect(embedded.url, log, { max: 1, prepare: false });
  return {
    sql,
    url: embedded.url,
    embedded,
    close: async () => {
      await sql.end({ timeout: 5 });
      await embedded.stop();
    },
  };
}

/** The database URL without its user, password and parameters: fit for an error message or a log. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return 'DATABASE_URL';
  }
}

// Connection-level failures (postgres.js reports its own timeout as CONNECT_TIMEOUT).
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET', 'CONNECT_TIMEOUT']);

/**
 * The first query's failure as the operator reads it: unreachable (the network code) or refused by
 * the server (its message: authentication failed, no such database), never the URL's password.
 */
function databaseFailure(url: string, err: unknown): Error {
  const where = describeDatabaseUrl(url);
  const e = err as { code?: unknown; name?: unknown; message?: unknown } | undefined;
  if (typeof e?.code === 'string' && UNREACHABLE.has(e.code)) {
    return new OperationalError(`cannot reach the database at ${where} (${e.code})`, { cause: err });
  }
  // A PostgresError: the server answered (28P01 password authentication failed, 3D000 no such database, ...).
  if (e?.name === 'PostgresError' && typeof e.message === 'string') {
    return new OperationalError(`cannot use the database at ${where}: ${e.message}${typeof e.code === 'string' ? ` (${e.code})` : ''}`, { cause: err });
  }
  return err instanceof Error ? err : new Error(String(err));
}
