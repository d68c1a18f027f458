// pg-boss job queues on Mailpath's own database, sharing the postgres.js pool (and its transactions).
import PgBoss from 'pg-boss';
import type postgres from 'postgres';
import type { Logger } from '../kernel/log.js';
import type { Queryable, Sql } from '../db/connection.js';

export type Boss = PgBoss;

/** Plain objects become JSON text, as the pg driver pg-boss was written for would send them. */
function toParam(value: unknown): unknown {
  if (value === undefined) return null;
  if (value !== null && typeof value === 'object' && !(value instanceof Date) && !Array.isArray(value) && !Buffer.isBuffer(value)) {
    return JSON.stringify(value);
  }
  return value;
}

/**
 * A pg-boss `db` adapter over a postgres.js handle. Given a transaction handle, jobs sent
 * through it commit or vanish with that transaction.
 */
export function bossDb(sql: Queryable): { executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }> } {
  return {
    async executeSql(text, values) {
      // pg-boss wraps schema changes in BEGIN/COMMIT; postgres.js runs a transaction only via begin().
      const wrapped = /^\s*BEGIN;([\s\S]*)COMMIT;\s*$/i.exec(text);
      if (wrapped && !('savepoint' in sql)) {
        await (sql as postgres.Sql).begin((tx) => tx.unsafe(wrapped[1]!));
        return { rows: [] };
      }
      const rows = values && values.length > 0 ? await sql.unsafe(text, values.map(toParam) as never[]) : await sql.unsafe(text);
      return { rows: Array.isArray(rows) ? [...rows] : [] };
    },
  };
}

export async function startBoss(sql: Queryable, log: Logger, options: { supervise: boolean; maintenanceIntervalSeconds?: number }): Promise<Boss> {
  const boss = new PgBoss({
    db: bossDb(sql),
    schema: 'pgboss',
    // Maintenance and monitoring belong to the scheduler role; other roles only send and work jobs.
    supervise: options.supervise,
    ...(options.maintenanceIntervalSeconds ? { maintenanceIntervalSeconds: options.maintenanceIntervalSeconds } : {}),
    schedule: options.supervise,
    migrate: true,
  });
  boss.on('error', (err) => log.error({ err }, 'queue error'));
  await boss.start();
  return boss;
}

/** Serializes queue creation across processes (an arbitrary constant, distinct from the other advisory locks). */
const JOB_QUEUE_CREATION_LOCK = 74_615_123;

export interface JobQueueOptions {
  policy?: 'standard' | 'short' | 'singleton' | 'stately';
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  expireInSeconds?: number;
  retentionMinutes?: number;
  deadLetter?: string;
}

/**
 * Creates a queue unless it exists, safe when several processes start at once. pg-boss's
 * create_queue makes a partition of its job table, and first creations racing in two processes
 * deadlock; so the same function pg-boss's createQueue calls runs here in one transaction behind
 * an advisory lock (one connection: the embedded database never waits on a second one).
 */
export async function createJobQueue(sql: Sql, name: string, options: JobQueueOptions): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${JOB_QUEUE_CREATION_LOCK})`;
    const [exists] = await tx`select 1 from pgboss.queue where name = ${name}`;
    if (exists) return;
    await tx`select pgboss.create_queue(${name}::text, ${JSON.stringify({ policy: 'standard', ...options })}::json)`;
  });
}
