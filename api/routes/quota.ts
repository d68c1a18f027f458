// GET /quota: the tenant's monthly send quota, used of cap, as the X-Quota-* headers of the send routes report it.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { QUOTA_WARNING_SHARE, quotaReport } from '../../shared/limits/quota/usage.js';
import { defineRoute } from '../route.js';
import { timestamp } from '../schemas/common.js';

export const quotaRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/quota',
    auth: 'any',
    // Every key: the send routes already hand the same figures to any key that sends (X-Quota-*), and a key that
    // cannot send still needs to know whether the account can.
    scope: 'any_key',
    rateLimit: 'read',
    tags: ['Identity'],
    summary: "This month's send quota",
    description:
      "Live sends counted this UTC month against the plan's monthly cap (test-key and sandbox sends use none), the same count as the " +
      `X-Quota-* headers of the send routes. warning is true from ${QUOTA_WARNING_SHARE * 100} % of the cap (X-Quota-Warning); at the cap sends are ` +
      'refused with 402 quota_exceeded until resets_at.',
    response: z.object({
      month: z.string().describe('YYYY-MM (UTC)'),
      used: z.number().int(),
      cap: z.number().int().describe("The plan's monthly send cap"),
      remaining: z.number().int(),
      used_pct: z.number().nullable().describe('used / cap in percent, one decimal; null when the cap is 0'),
      warning: z.boolean().describe(`used is at least ${QUOTA_WARNING_SHARE * 100} % of cap`),
      resets_at: timestamp.describe('00:00 UTC on the first of next month'),
    }),
    handler: async ({ principal }) => quotaReport(ctx.sql, principal.tenant.id, ctx.clock.now()),
  });
};
