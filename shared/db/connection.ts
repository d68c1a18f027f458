// Opens the PostgreSQL connection pool: DATABASE_URL, or the embedded PGlite server in the data dir.
import postgres from 'postgres';
import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
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
