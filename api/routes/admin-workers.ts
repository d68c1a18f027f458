// Super-admin view of the scheduled workers (last tick, next tick, env gate, alerts) and their run-now path.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { writeAudit } from '../../shared/operations/audit/log.js';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { AppError, notFound } from '../../shared/kernel/errors.js';
import { findWorker, runWorker } from '../../shared/operations/workers/catalog.js';
import { workerStatuses } from '../../shared/operations/workers/status.js';
import { defineRoute } from '../route.js';
import { iso, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: platform'];

const outcome = z.enum(['ok', 'error', 'skipped']);

const worker = z.object({
  name: z.string(),
  description: z.string(),
  interval_minutes: z.number().int(),
  last_tick_at: timestamp.nullable(),
  last_tick_outcome: outcome.nullable().describe('skipped: the env gate kept the worker off'),
  last_tick_duration_ms: z.number().int().nullable(),
  last_error: z.string().nullable(),
  consecutive_failures: z.number().int().describe('Failed ticks in a row up to the last one'),
  next_tick_estimate: timestamp.describe('Next scheduled tick (UTC-aligned interval)'),
  env_gate: z.string().nullable().describe('The environment variable that switches the worker on, null when none does'),
  env_gate_active: z.boolean().describe('An environment flag currently keeps the worker from doing its work'),
  last_alert_at: timestamp.nullable(),
  last_alert_event: z
    .enum(['failing', 'recovered'])
    .nullable()
    .describe('failing: N ticks failed in a row (config/workers.yaml); recovered: a success after that'),
});

export const adminWorkerRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/admin/workers',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Scheduled workers',
    description:
      'Every scheduled worker sorted by name, with its last tick (time, outcome, duration), failing streak, next tick estimate, env gate and last alert.',
    response: z.object({ items: z.array(worker) }),
    handler: async () => {
      const items = (await workerStatuses(ctx)).map((w) => ({
        ...w,
        last_tick_at: iso(w.last_tick_at),
        next_tick_estimate: w.next_tick_estimate.toISOString(),
        last_alert_at: iso(w.last_alert_at),
        last_alert_event: w.last_alert_event as 'failing' | 'recovered' | null,
      }));
      return { items };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/workers/:name/run-now',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Run a scheduled worker now',
    description:
      'Runs one tick at once, outside the schedule, and records it like a scheduled tick (audited as worker.run_now). 502 worker_failed when the ' +
      'tick fails; a worker its env gate keeps off is skipped (outcome skipped).',
    params: z.object({ name: z.string().max(64) }),
    errors: [404, 502],
    response: z.object({ elapsed_ms: z.number().int(), triggered: z.boolean(), outcome, result: z.record(z.string(), z.unknown()).nullable() }),
    handler: async ({ params, principal, ip }) => {
      const found = findWorker(params.name);
      if (!found) throw notFound('worker');
      const run = await runWorker(ctx, found);
      await writeAudit(ctx.sql, {
        tenantId: null,
        actor: actorOf(principal, ip),
        action: 'worker.run_now',
        resourceType: 'worker',
        resourceId: found.name,
        metadata: { outcome: run.outcome, elapsed_ms: run.elapsed_ms, error: run.error },
        at: ctx.clock.now(),
      });
      if (run.outcome === 'error') throw new AppError('worker_failed', `${found.name} failed: ${run.error}`);
      return { elapsed_ms: run.elapsed_ms, triggered: run.triggered, outcome: run.outcome, result: run.result };
    },
  });
};
