// Super-admin tenant activity and health: the audit trail, the database figures, the daily health checks with their run-now, and the morning digest's run-now.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { tenantActivity } from '../../shared/operations/audit/activity.js';
import { writeAudit } from '../../shared/operations/audit/log.js';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { notFound } from '../../shared/kernel/errors.js';
import { CHECK_NAMES } from '../../shared/operations/tenant-health/checks.js';
import { dbHealth, SLOW_QUERY_MS } from '../../shared/operations/tenant-health/db-health.js';
import { postTenantDigest } from '../../shared/operations/tenant-health/digest.js';
import type { HealthRun } from '../../shared/operations/tenant-health/queries.js';
import { HEALTH_CHECK_HOUR_UTC, runTenantHealthCheck, tenantHealthRuns } from '../../shared/operations/tenant-health/runs.js';
import { requireTenant } from '../../shared/accounts/tenants/require.js';
import { requireWorker, TENANT_DIGEST_WORKER, TENANT_HEALTH_WORKER } from '../../shared/operations/workers/catalog.js';
import { defineRoute } from '../route.js';
import { idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: tenants'];
export const ACTIVITY_LIMIT = { min: 1, max: 200, default: 50 };
export const HEALTH_LIMIT = { min: 1, max: 200, default: 30 };

/** A limit clamped silently into range (the spec's admin lists): out-of-range values are not an error. */
const clampedLimit = (l: typeof HEALTH_LIMIT) =>
  z.coerce
    .number()
    .int()
    .catch(l.default)
    .default(l.default)
    .transform((n) => Math.min(l.max, Math.max(l.min, n)))
    .describe(`Entries, ${l.min}..${l.max} (clamped), default ${l.default}`);

const status = z.enum(['pass', 'warn', 'fail']);
const healthRun = z.object({
  id: z.string(),
  ran_at: timestamp,
  trigger: z.enum(['schedule', 'run_now']),
  verdict: status.describe('The worst status of the checks'),
  checks: z.array(
    z.object({
      name: z.enum(CHECK_NAMES),
      status,
      value: z.number().nullable().describe('The measured figure (rate as a fraction, quota in percent, a count); null when there was nothing to measure'),
      detail: z.string(),
    }),
  ),
});
const presentRun = (r: HealthRun) => ({
  id: r.id,
  ran_at: r.ran_at.toISOString(),
  trigger: r.trigger,
  verdict: r.verdict,
  checks: r.checks as z.input<typeof healthRun>['checks'],
});

export const adminTenantHealthRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/activity',
    auth: 'super_admin',
    tags: TAGS,
    summary: "A tenant's recent activity",
    description:
      `The last N audit entries of the tenant (limit ${ACTIVITY_LIMIT.min}..${ACTIVITY_LIMIT.max}, clamped, default ${ACTIVITY_LIMIT.default}), newest ` +
      `first: ` +
      "its users' and keys' actions and the operators' actions on it. Each has the event (the audit action), the actor (type, id, label: a user's e-mail " +
      "or a key's name, null once deleted; ip) and the resource. Unknown tenant → 404.",
    params: idParam('id'),
    query: z.object({ limit: clampedLimit(ACTIVITY_LIMIT) }),
    errors: [404],
    response: z.object({
      items: z.array(
        z.object({
          id: z.string(),
          at: timestamp,
          event: z.string().describe('The audit action, e.g. tenant.suspended, api_key.created, super_admin.impersonation_action'),
          actor: z.object({ type: z.enum(['user', 'api_key', 'system']), id: z.string().nullable(), label: z.string().nullable(), ip: z.string().nullable() }),
          resource_type: z.string().nullable(),
          resource_id: z.string().nullable(),
          metadata: z.record(z.string(), z.unknown()),
        }),
      ),
    }),
    handler: async ({ params, query }) => {
      await requireTenant(ctx.sql, params.id);
      const items = await tenantActivity(ctx.sql, params.id, query.limit);
      return { items: items.map((e) => ({ ...e, at: e.at.toISOString() })) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/db-health',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Database health (as the tenant sees it)',
    description:
      "The shared database's figures, read beside the tenant (every tenant's data lives in it): active connections, size, last vacuum, replication lag, " +
      `slow statements (calls of statements averaging ≥ ${SLOW_QUERY_MS} ms, from pg_stat_statements, when its counters were reset within 24 hours). ` +
      'Each probe runs on its own: one that fails (or has nothing to go on, e.g. pg_stat_statements not loaded) yields null for its field, the others ' +
      'still answer. Unknown tenant → 404.',
    params: idParam('id'),
    errors: [404],
    response: z.object({
      connections_active: z.number().int().nullable().describe('Backends of this database running a statement now'),
      db_size_mb: z.number().nullable().describe('pg_database_size in MiB, one decimal'),
      last_vacuum_at: timestamp.nullable().describe('Latest vacuum or autovacuum of any table; null when none or the probe failed'),
      replication_lag_s: z.number().nullable().describe('Replay lag in seconds: of this server if a replica, else of its slowest replica (0 without replicas)'),
      slow_query_count_24h: z.number().int().nullable(),
    }),
    handler: async ({ params }) => {
      await requireTenant(ctx.sql, params.id);
      const h = await dbHealth(ctx);
      return { ...h, last_vacuum_at: iso(h.last_vacuum_at) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/health-checks',
    auth: 'super_admin',
    tags: TAGS,
    summary: "A tenant's health-check runs",
    description:
      `The stored runs of the tenant's health checks, newest first by ran_at (limit ${HEALTH_LIMIT.min}..${HEALTH_LIMIT.max}, out-of-range values ` +
      `clamped, default ${HEALTH_LIMIT.default}). ` +
      'Checks: dns_verified (a verified sending domain whose records drifted fails; none verified warns), bounce_rate and complaint_rate (over ' +
      'config/workers.yaml ' +
      'health_checks.rates_window_days, judged from min_sends_for_rates sends), quota (this month against the plan cap), webhook_dead_letters (inbound ' +
      'and event ' +
      'webhook deliveries dead-lettered lately). Unknown tenant → 404.',
    params: idParam('id'),
    query: z.object({ limit: clampedLimit(HEALTH_LIMIT) }),
    errors: [404],
    response: z.object({ tenant_id: z.string(), limit: z.number().int(), count: z.number().int(), items: z.array(healthRun) }),
    handler: async ({ params, query }) => {
      const runs = await tenantHealthRuns(ctx, params.id, query.limit);
      return { tenant_id: params.id, limit: query.limit, count: runs.length, items: runs.map(presentRun) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/tenants/:id/health-checks/run-now',
    auth: 'super_admin',
    tags: TAGS,
    summary: "Run a tenant's health checks now",
    description:
      `Runs the checks of the daily ${TENANT_HEALTH_WORKER} worker for this tenant at once, ignoring its ` +
      `${String(HEALTH_CHECK_HOUR_UTC).padStart(2, '0')}:00 ` +
      `UTC gate, and stores the run ` +
      "(trigger run_now; it does not stand in for the day's scheduled run). Audited as tenant.health_check_run. 503 worker_unavailable when the worker " +
      'is not wired; unknown tenant → 404.',
    params: idParam('id'),
    errors: [404, 503],
    response: z.object({ elapsed_ms: z.number().int(), triggered: z.literal(true), verdict: status, run: healthRun }),
    handler: async ({ params, principal, ip }) => {
      requireWorker(TENANT_HEALTH_WORKER);
      await requireTenant(ctx.sql, params.id);
      const started = performance.now();
      const run = await runTenantHealthCheck(ctx, params.id, 'run_now');
      const elapsed = Math.round(performance.now() - started);
      await writeAudit(ctx.sql, {
        tenantId: params.id,
        actor: actorOf(principal, ip),
        action: 'tenant.health_check_run',
        resourceType: 'tenant',
        resourceId: params.id,
        metadata: { verdict: run.verdict, run_id: run.id, elapsed_ms: elapsed },
        at: ctx.clock.now(),
      });
      return { elapsed_ms: elapsed, triggered: true as const, verdict: run.verdict, run: presentRun(run) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/tenants/:id/digest/run-now',
    auth: 'super_admin',
    tags: TAGS,
    summary: "Post a tenant's daily digest now",
    description:
      `Posts the tenant's line of the ${TENANT_DIGEST_WORKER} worker (normally 09:00 IST) to the operators' chat at once, through the chat queue, ` +
      `ignoring the ` +
      '09:00 IST gate and the once-a-day digest_last_posted_at gate (and setting it). Without MAILPATH_CHAT_WEBHOOK_URL the line is only logged ' +
      '(delivery logged). Audited as tenant.digest_posted. 503 worker_unavailable when the worker is not wired; unknown tenant → 404.',
    params: idParam('id'),
    errors: [404, 503],
    response: z.object({
      elapsed_ms: z.number().int(),
      triggered: z.literal(true),
      delivery: z.enum(['queued', 'logged']).describe('queued: on its way to the chat webhook; logged: no chat notifier is wired'),
    }),
    handler: async ({ params, principal, ip }) => {
      requireWorker(TENANT_DIGEST_WORKER);
      await requireTenant(ctx.sql, params.id);
      const started = performance.now();
      const delivery = await postTenantDigest(ctx, params.id, true);
      if (delivery !== 'queued' && delivery !== 'logged') throw notFound('tenant');
      const elapsed = Math.round(performance.now() - started);
      await writeAudit(ctx.sql, {
        tenantId: params.id,
        actor: actorOf(principal, ip),
        action: 'tenant.digest_posted',
        resourceType: 'tenant',
        resourceId: params.id,
        metadata: { delivery, elapsed_ms: elapsed },
        at: ctx.clock.now(),
      });
      return { elapsed_ms: elapsed, triggered: true as const, delivery };
    },
  });
};
