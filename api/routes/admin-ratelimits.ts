// Super-admin view of the tenants' API rate limits: per-second cap against the recent peak, and recent 429s.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CURRENT_WINDOW_SECONDS, rateLimitUtilization, THROTTLE_WINDOW_MINUTES } from '../../shared/limits/rate-limits/utilization.js';
import { defineRoute } from '../route.js';
import { timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: platform'];

export const adminRateLimitRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/admin/ratelimits',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Tenant rate-limit utilization',
    description:
      `Every tenant that made requests in the last ${CURRENT_WINDOW_SECONDS} seconds, was refused (429, or 451 on SMTP submission) in the last ` +
      `${THROTTLE_WINDOW_MINUTES} minutes, or has a per-second override. Sorted by utilization_pct desc, then recent_throttle_count desc, then tenant_name ` +
      `asc. ` +
      'Figures are the counts every process shares (synced every rate_limits.sync_interval_ms). A probe that fails leaves its figures at 0 and is ' +
      'named in errors rather than failing the call.',
    response: z.object({
      as_of: timestamp,
      items: z.array(
        z.object({
          tenant_id: z.string(),
          tenant_name: z.string(),
          capacity: z.number().int().describe('Per-second cap: the override, else rate_limits.tenant_default_per_sec'),
          current: z.number().int().describe(`Requests in the busiest second of the last ${CURRENT_WINDOW_SECONDS} seconds`),
          utilization_pct: z.number().describe('current / capacity in percent, one decimal'),
          recent_throttle_count: z.number().int().describe(`Requests refused in the last ${THROTTLE_WINDOW_MINUTES} minutes (counted per minute)`),
          last_throttle_at: timestamp.optional().describe('The latest refusal; omitted when there was none in the window'),
        }),
      ),
      errors: z.array(z.object({ probe: z.string(), message: z.string() })).describe('Probes that failed (current, throttles, tenants)'),
    }),
    handler: async () => {
      const report = await rateLimitUtilization({ sql: ctx.sql, clock: ctx.clock, defaultPerSec: ctx.config.limits.rate_limits.tenant_default_per_sec });
      return {
        as_of: report.as_of.toISOString(),
        items: report.items.map(({ last_throttle_at, ...rest }) => ({
          ...rest,
          ...(last_throttle_at ? { last_throttle_at: last_throttle_at.toISOString() } : {}),
        })),
        errors: report.errors,
      };
    },
  });
};
