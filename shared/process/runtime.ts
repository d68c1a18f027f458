// Starts a Mailpath process: database (or embedded), migrations, queues, super-admin bootstrap, then its roles.
import type { Config } from '../config.js';
import { systemClock } from '../clock.js';
import { openDatabase } from '../db/connection.js';
import { migrate } from '../db/migrate.js';
import { createLogger, type Logger } from '../log.js';
import { startQueue } from '../queue.js';
import { ensureSuperAdmin } from '../auth/bootstrap.js';
import { startRoles, type RunningRole } from './roles.js';

export interface RunningMailpath {
  roles: RunningRole[];
  databaseUrl: string;
  stop(): Promise<void>;
}

export async function startMailpath(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningMailpath> {
  const db = await openDatabase(config, log);
  try {
    const applied = await migrate(db.sql);
    if (applied.length > 0) log.info({ applied }, 'database migrations applied');
    await ensureSuperAdmin({ sql: db.sql, config, clock: systemClock, log });
    const boss = await startQueue(db.sql, log, {
      supervise: config.roles.includes('scheduler'),
      maintenanceIntervalSeconds: config.delivery.workers.queue_maintenance_seconds,
    });
    const roles = await startRoles(config.roles, { config, sql: db.sql, log, boss });
    log.info({ roles: roles.map((r) => ({ role: r.name, ...r.details })), embedded: db.embedded !== undefined }, 'mailpath started');
    let stopping: Promise<void> | undefined;
    return {
      roles,
      databaseUrl: db.url,
      stop: () =>
        (stopping ??= (async () => {
          // Roles first (stop accepting, drain), then the queue, then the database.
          await Promise.allSettled(roles.map((r) => r.stop()));
          await boss.stop({ graceful: true, wait: true, timeout: config.shutdownTimeoutMs }).catch((err: unknown) => log.warn({ err }, 'queue stop'));
          await db.close();
          log.info('mailpath stopped');
        })()),
    };
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}
