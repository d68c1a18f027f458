// Super-admin view of the scheduled workers (last tick, next tick) and their run-now path.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError, notFound } from '../../shared/errors.js';
import { findWorker, nextTickAfter, runWorker, WORKERS } from '../../shared/workers/catalog.js';
import { listTicks } from '../../shared/workers/ticks.js';
import { defineRoute } from '../route.js';
import { iso, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: platform'];

const worker = z.object({
  name: z.string(),
  description: z.string(),
  interval_minutes: z.number().int(),
  last_tick_at: timestamp.nullable(),
  last_tick_outcome: z.enum(['ok', 'error']).nullable(),
  last_tick_duration_ms: z.number().int().nullable(),
  last_error: z.string().nullable(),
  next_tick_estimate: timestamp.describe('Next scheduled tick (UTC-aligned interval)'),
  env_gate_active: z.boolean().describe('An environment flag currently keeps the worker from doing its work'),
  last_alert_at: timestamp.nullable(),
  last_alert_event: z.string().nullable(),
});

export const adminWorkerRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/admin/workers',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Scheduled workers',
    description: 'Every scheduled worker sorted by name, with its last tick (time, outcome, duration) and the next tick estimate.',
    response: z.object({ items: z.array(worker) }),
    handler: async () => {
      const ticks = new Map((await listTicks(ctx.sql)).map((t) => [t.name, t]));
      const now = ctx.clock.now();
      const items = WORKERS.map((w) => {
        const tick = ticks.get(w.name);
        const interval = w.intervalMinutes(ctx);
        return {
          name: w.name,
          description: w.description,
          interval_minutes: interval,
          last_tick_at: iso(tick?.last_tick_at ?? null),
          last_tick_outcome: (tick?.last_tick_outcome ?? null) as 'ok' | 'error' | null,
          last_tick_duration_ms: tick?.last_tick_duration_ms ?? null,
          last_error: tick?.last_error ?? null,
          next_tick_estimate: nextTickAfter(interval, now).toISOString(),
          env_gate_active: false,
          last_alert_at: null,
          last_alert_event: null,
        };
      }).sort((a, b) => a.name.localeCompare(b.name));
      return { items };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/workers/:name/run-now',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Run a scheduled worker now',
    description: 'Runs one tick at once, outside the schedule, and records it like a scheduled tick. 502 worker_failed when the tick fails.',
    params: z.object({ name: z.string().max(64) }),
    errors: [404, 502],
    response: z.object({ elapsed_ms: z.number().int(), triggered: z.boolean(), outcome: z.enum(['ok', 'error']), result: z.record(z.string(), z.unknown()).nullable() }),
    handler: async ({ params }) => {
      const found = findWorker(params.name);
      if (!found) throw notFound('worker');
      const run = await runWorker(ctx, found);
      if (run.outcome === 'error') throw new AppError('worker_failed', `${found.name} failed: ${run.error}`);
      return { elapsed_ms: run.elapsed_ms, triggered: run.triggered, outcome: run.outcome, result: run.result };
    },
  });
};
