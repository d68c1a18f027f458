// Super-admin observability: the platform overview (sections computed independently, failures degraded and named) and the slowest queries by p99.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { observabilityOverview } from '../../shared/operations/observability/overview.js';
import { SLOW_QUERY_LIMITS, slowQueryReport } from '../../shared/operations/observability/slow-query-report.js';
import { defineRoute } from '../route.js';
import { iso, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: platform'];
const count = z.number().int();
const sendStatus = z.enum(['queued', 'deferred', 'sending', 'delivered', 'bounced', 'dropped', 'simulated', 'failed']);

const overview = z.object({
  as_of: timestamp,
  tenants: z
    .object({ total: count, active: count, suspended: count, sandbox: count })
    .describe('Tenants by status; sandbox: tenants whose sends are simulated'),
  domains: z
    .object({
      total: count,
      verified: count,
      pending: count.describe('Never verified yet'),
      drifted: count.describe('Verified once, failing their last check'),
    })
    .describe('Sending domains by verification state'),
  sends_24h: z.object({ total: count, by_status: z.record(sendStatus, count) }).describe('Sends created in the last 24 hours, by current status'),
  warmup: z
    .object({
      domains: count,
      paused: count,
      held: count.describe('Tier frozen by a super-admin'),
      by_tier: z.record(z.string(), count).describe('Domains per warm-up tier'),
    })
    .describe('Domains in warm-up'),
  healthchecks: z
    .object({ tenants_checked: count, passing: count, warning: count, failing: count, last_run_at: timestamp.nullable() })
    .describe("Each tenant's latest health check, counted by verdict (pass, warn, fail)"),
  esp_scores: z
    .array(z.object({ provider: z.string(), score: z.number(), sample_size: count }))
    .describe(
      "Deliverability score (0..100, the trust-score formula) per mailbox provider over every tenant's mail of the last 30 days, best first; providers " +
        'without outcomes are left out; sample_size is their sends',
    ),
  dns_drift: z
    .object({
      drifted: count,
      last_checked_at: timestamp.nullable().describe('The latest DNS check of any domain'),
      recent: z.array(z.object({ domain: z.string(), tenant_id: z.string(), drifted_at: timestamp })).describe('At most 10, newest drift first'),
    })
    .describe('Domains whose DNS records drifted (the domain-recheck worker finds them)'),
  schema_drift: z
    .object({
      expected: count.describe('Migrations this build ships'),
      applied: count.describe('Migrations the database records as applied'),
      latest_expected: count.nullable(),
      latest_applied: count.nullable(),
      missing: z.array(count).describe('Shipped but not applied'),
      unknown: z.array(count).describe('Applied but not shipped by this build (a newer build ran against this database)'),
      in_sync: z.boolean(),
    })
    .describe('Applied versus expected database migrations'),
  process: z
    .object({
      pid: count,
      uptime_s: count,
      memory_mb: z.object({ rss: count, heap_used: count, heap_total: count, external: count }),
      event_loop_delay_ms: z
        .object({ p50: z.number(), p99: z.number(), max: z.number() })
        .describe('Sampled from the first overview request this process served'),
    })
    .describe('The process that answered (each process answers for itself)'),
  errors: z
    .array(z.object({ section: z.string(), message: z.string() }))
    .describe('Sections that failed to compute: each shows its zero value and is named here; the call itself succeeds'),
});

const stats = { calls: count, p99_ms: z.number(), mean_ms: z.number(), max_ms: z.number() };
const slowQueries = z.object({
  as_of: timestamp,
  lookback_hours: count,
  warn_ms: z.number().describe('p99 at or above this: level warn (config/observability.yaml)'),
  error_ms: z.number().describe('p99 at or above this: level error'),
  source: z
    .enum(['pg_stat_statements', 'mailpath'])
    .describe(
      "pg_stat_statements when the database has it loaded (p99 estimated as mean + 2.326 σ, capped at max; no windows), else Mailpath's own query timing",
    ),
  items: z.array(
    z.object({
      query: z.string().describe('Statement text (parameters as $n)'),
      ...stats,
      level: z.enum(['ok', 'warn', 'error']),
      latest_window: z
        .object({ start: timestamp, end: timestamp, ...stats })
        .nullable()
        .describe('The same figures for the latest 5-minute window the statement ran in; null from pg_stat_statements'),
    }),
  ),
  error: z.string().nullable().describe('Why the report could not be read (items is then empty), or null'),
});

const clampedNumber = z.coerce.number().optional();

export const adminObservabilityRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/admin/observability',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Platform overview',
    description:
      'Tenants, domains, sends of the last 24 hours, warm-up, tenant health checks, per-ESP scores, DNS drift, schema drift (applied versus expected ' +
      'migrations) and this process (uptime, memory, event-loop delay). Each section is computed on its own: one that fails shows its zero value ' +
      'and is named in errors, and the call still succeeds.',
    response: overview,
    handler: async () => {
      const o = await observabilityOverview({ sql: ctx.sql, clock: ctx.clock, classifier: ctx.providerClassifier });
      return {
        ...o,
        as_of: o.as_of.toISOString(),
        healthchecks: { ...o.healthchecks, last_run_at: iso(o.healthchecks.last_run_at) },
        dns_drift: {
          ...o.dns_drift,
          last_checked_at: iso(o.dns_drift.last_checked_at),
          recent: o.dns_drift.recent.map((r) => ({ ...r, drifted_at: r.drifted_at.toISOString() })),
        },
      };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/observability/slow-queries',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Slowest queries by p99',
    description:
      'The statements with the highest p99 latency over the lookback, each with its latest 5-minute window. From pg_stat_statements when the database ' +
      "has it loaded; otherwise from Mailpath's own query timing, which every process records per statement and 5-minute window and writes to the " +
      'database. Out-of-range limit and hours are clamped silently.',
    query: z.object({
      limit: clampedNumber.describe(
        `How many statements, ${SLOW_QUERY_LIMITS.limit.min}..${SLOW_QUERY_LIMITS.limit.max} (default ${SLOW_QUERY_LIMITS.limit.default}; clamped)`,
      ),
      hours: clampedNumber.describe(
        `Lookback in hours, ${SLOW_QUERY_LIMITS.hours.min}..${SLOW_QUERY_LIMITS.hours.max} (default ${SLOW_QUERY_LIMITS.hours.default}; clamped)`,
      ),
    }),
    response: slowQueries,
    handler: async ({ query }) => {
      const report = await slowQueryReport(ctx, query);
      return {
        ...report,
        as_of: report.as_of.toISOString(),
        items: report.items.map((i) => ({
          ...i,
          latest_window: i.latest_window ? { ...i.latest_window, start: i.latest_window.start.toISOString(), end: i.latest_window.end.toISOString() } : null,
        })),
      };
    },
  });
};
