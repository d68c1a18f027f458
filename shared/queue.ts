// pg-boss job queues on Mailpath's own database, sharing the postgres.js pool (and its transactions).
import PgBoss from 'pg-boss';
import type postgres from 'postgres';
import type { Logger } from './log.js';
import type { Queryable } from './db/connection.js';

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

export async function startQueue(sql: Queryable, log: Logger, options: { supervise: boolean; maintenanceIntervalSeconds?: number }): Promise<Boss> {
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
