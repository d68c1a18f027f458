// Starts a Mailpath process: database (or embedded), migrations, job queues, the services (once), its roles, then the super-admin bootstrap.
import { ConfigError, type Config } from '../shared/config/index.js';
import { planExists, tenantPlanIds } from '../shared/accounts/tenants/settings-queries.js';
import { systemClock } from '../shared/kernel/clock.js';
import { openDatabase, type Sql } from '../shared/db/connection.js';
import { migrate } from '../shared/db/migrate.js';
import { createLogger, type Logger } from '../shared/kernel/log.js';
import { startBoss, type Boss } from '../shared/jobs/boss.js';
import { ensureSuperAdmin, showGeneratedPassword } from '../shared/accounts/auth/bootstrap.js';
import { startRoles, type RunningRole } from './roles.js';
import { buildServices, type Services } from './services.js';
import { lowerHelperThreads } from './thread-priority.js';
import { startOperatorServer, type RunningOperatorServer } from '../api/operator-server.js';
import { QueryTimings, timedSql } from '../shared/operations/observability/query-timing.js';
import { startTimingFlusher, type RunningTimingFlusher } from '../shared/operations/observability/timing-flusher.js';

export interface RunningMailpath {
  roles: RunningRole[];
  databaseUrl: string;
  /** The process's database pool (the dev DNS reads the records to publish from it). */
  sql: Sql;
  /** The operator port serving GET /metrics; undefined when MAILPATH_METRICS_PORT is off. */
  metricsPort: number | undefined;
  stop(): Promise<void>;
}

/** A registration plan that is not a row of plans would fail every sign-up: refuse to start instead. */
async function checkRegistrationPlan(sql: Sql, planId: string): Promise<void> {
  if (await planExists(sql, planId)) return;
  throw new ConfigError(`auth.registration_plan: unknown plan '${planId}' (plans: ${(await tenantPlanIds(sql)).join(', ')})`);
}

export async function startMailpath(config: Config, log: Logger = createLogger(config.logLevel)): Promise<RunningMailpath> {
  const db = await openDatabase(config, log);
  let boss: Boss | undefined;
  let services: Services | undefined;
  let roles: RunningRole[] | undefined;
  let operator: RunningOperatorServer | undefined;
  let flusher: RunningTimingFlusher | undefined;
  try {
    const applied = await migrate(db.sql);
    if (applied.length > 0) log.info({ applied }, 'database migrations applied');
    await checkRegistrationPlan(db.sql, config.auth.registration_plan);
    // Every statement the services and queues run is timed for the slow-query report (config/observability.yaml);
    // the flusher writes with the bare pool, so its own statements are not counted.
    const timingConfig = config.observability.query_timing;
    const timings = timingConfig.enabled
      ? new QueryTimings({
          windowMinutes: timingConfig.window_minutes,
          maxStatementsPerWindow: timingConfig.max_statements_per_window,
          samplesPerStatement: timingConfig.samples_per_statement,
        })
      : undefined;
    const sql = timings ? timedSql(db.sql, timings) : db.sql;
    if (timings) flusher = startTimingFlusher(db.sql, timings, timingConfig, log);
    boss = await startBoss(sql, log, {
      supervise: config.roles.includes('scheduler'),
      maintenanceIntervalSeconds: config.delivery.workers.queue_maintenance_seconds,
    });
    services = await buildServices({ config, sql, log, boss, clock: systemClock });
    // Every process serves its own metrics, whatever its roles: a failure to bind stops start-up like any listener's.
    if (config.metrics) operator = await startOperatorServer(services.metrics, log, config.metrics);
    roles = await startRoles(config.roles, services);
    // Once the roles run, every helper thread of the process exists (libuv's pool is started if it was not).
    const lowered = await lowerHelperThreads(config.runtime.helper_thread_nice);
    if (lowered > 0) log.debug({ threads: lowered, nice: config.runtime.helper_thread_nice }, 'helper threads run below the event loop');
    // Last: a start-up that fails before this has created no super-admin, so a generated password
    // is never lost; the next start generates one. It is shown only once everything is up.
    const admin = await ensureSuperAdmin({ sql: db.sql, config, clock: systemClock, log });
    log.info({ roles: roles.map((r) => ({ role: r.name, ...r.details })), embedded: db.embedded !== undefined }, 'mailpath started');
    // After that line (the log writes synchronously, so the order holds on a shared terminal).
    showGeneratedPassword(admin);
    const started = { boss, services, roles, operator, flusher };
    let stopping: Promise<void> | undefined;
    return {
      roles: started.roles,
      databaseUrl: db.url,
      sql: db.sql,
      metricsPort: operator?.port,
      stop: () =>
        (stopping ??= (async () => {
          // Roles first (stop accepting, drain), then what the services hold, then the queue, then the database.
          await Promise.allSettled(started.roles.map((r) => r.stop()));
          await started.operator?.stop();
          await started.services.close().catch((err: unknown) => log.warn({ err }, 'services close'));
          await started.boss.stop({ graceful: true, wait: true, timeout: config.shutdownTimeoutMs }).catch((err: unknown) => log.warn({ err }, 'queue stop'));
          await started.flusher?.stop();
          await db.close();
          log.info('mailpath stopped');
        })()),
    };
  } catch (err) {
    await Promise.allSettled((roles ?? []).map((r) => r.stop()));
    await operator?.stop();
    await services?.close().catch(() => {});
    await boss?.stop({ graceful: false, wait: true }).catch(() => {});
    await flusher?.stop().catch(() => {});
    await db.close().catch(() => {});
    throw err;
  }
}
