// Runs the tenant health checks: one tenant on demand (run-now), or every tenant once a day from 06:00 UTC (the scheduled worker), storing each run.
import type { Config } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { evaluateTenantHealth, verdictOf } from './checks.js';
import { requireTenant } from '../../accounts/tenants/require.js';
import { insertHealthRun, listHealthRuns, tenantsDueForHealthCheck, type HealthRun } from './queries.js';

/** The daily checks run from this UTC hour on (the worker ticks hourly; before it a tick does nothing). */
export const HEALTH_CHECK_HOUR_UTC = 6;
/** At most this many tenants per tick: a platform larger than that is finished by the next hourly ticks. */
const MAX_TENANTS_PER_TICK = 10_000;

export interface HealthDeps {
  sql: Sql;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'workers'>;
}

/** Checks one tenant now and stores the run. */
export async function runTenantHealthCheck(deps: HealthDeps, tenantId: string, trigger: HealthRun['trigger']): Promise<HealthRun> {
  const checks = await evaluateTenantHealth({ sql: deps.sql, clock: deps.clock, thresholds: deps.config.workers.health_checks }, tenantId);
  return insertHealthRun(deps.sql, { tenant_id: tenantId, ran_at: deps.clock.now(), trigger, verdict: verdictOf(checks), checks });
}

const utcDayStart = (at: Date) => new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));

/**
 * The scheduled tick: before 06:00 UTC it does nothing; from then on it checks every tenant (but the platform's
 * own) that has no scheduled run yet this UTC day. Hourly ticks make that once a day at 06:00, with a catch-up
 * later in the day when the 06:00 tick was missed. One tenant's failure is logged and counted; the others go on.
 */
export async function runDailyHealthChecks(deps: HealthDeps): Promise<Record<string, unknown>> {
  const now = deps.clock.now();
  if (now.getUTCHours() < HEALTH_CHECK_HOUR_UTC) return { skipped: `before ${String(HEALTH_CHECK_HOUR_UTC).padStart(2, '0')}:00 UTC`, checked: 0 };
  const due = await tenantsDueForHealthCheck(deps.sql, utcDayStart(now), MAX_TENANTS_PER_TICK);
  const verdicts = { pass: 0, warn: 0, fail: 0 };
  let errors = 0;
  for (const tenantId of due) {
    try {
      verdicts[(await runTenantHealthCheck(deps, tenantId, 'schedule')).verdict]++;
    } catch (err) {
      errors++;
      deps.log.error({ err, tenantId }, 'tenant health check failed');
    }
  }
  if (errors > 0 && errors === due.length) throw new Error(`every tenant health check failed (${errors})`);
  return { checked: due.length - errors, ...verdicts, errors };
}

/** A tenant's latest runs, newest first; 404 for an unknown tenant. */
export async function tenantHealthRuns(deps: Pick<HealthDeps, 'sql'>, tenantId: string, limit: number): Promise<HealthRun[]> {
  await requireTenant(deps.sql, tenantId);
  return listHealthRuns(deps.sql, tenantId, limit);
}
