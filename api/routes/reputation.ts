// Reputation of the caller's sending domains: deliverability rates over 1, 7 and 30 days, warm-up state and trust score.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { reputationOf } from '../../shared/engagement/reputation/service.js';
import { TRUST_TIERS } from '../../shared/engagement/reputation/trust-score.js';
import { defineRoute } from '../route.js';
import { timestamp } from '../schemas/common.js';

const share = z.number().min(0).max(1).nullable();

const windowReport = z.object({
  days: z.number().int().describe('1, 7 or 30: live sends created in the last N×24 hours'),
  sent: z.number().int().describe('Sends that reached an outcome: delivered + bounced'),
  delivered: z.number().int(),
  bounced: z.number().int().describe('Refused, bounced later (a bounce report), or retries exhausted'),
  complained: z.number().int().describe('Delivered sends with a complaint'),
  engaged: z.number().int().describe('Delivered sends with a human open or click (machine opens and scanner clicks excluded)'),
  delivery_rate: share.describe('delivered / sent; null without sends'),
  bounce_rate: share.describe('bounced / sent'),
  complaint_rate: share.describe('complained / delivered'),
  engagement_rate: share.describe('engaged / delivered'),
});

const domain = z.object({
  domain_id: z.string(),
  domain: z.string(),
  verified: z.boolean().describe('SPF, DKIM and DMARC verify: the domain may send'),
  windows: z.array(windowReport).describe('1, 7 and 30 days, in that order'),
  warmup: z.object({
    tier: z.number().int().describe('The warm-up tier the next send is gated on (0 for a domain that never sent or sat idle too long)'),
    daily_cap: z.number().int(),
    sent_today: z.number().int().describe("Sends counted against today's (UTC) cap"),
    remaining_today: z.number().int(),
  }),
  trust_score: z
    .object({
      score: z.number().int().min(0).max(100),
      tier: z.enum(TRUST_TIERS),
      factors: z.array(z.object({ name: z.enum(['delivery', 'bounce', 'complaint', 'engagement']), weight: z.number(), value: z.number().describe('0..1') })),
    })
    .nullable()
    .describe('From the 30-day rates (formula in docs/deliverability.md); null without sends in 30 days'),
});

export const reputationRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/reputation',
    auth: 'any',
    scope: 'reputation:read',
    rateLimit: 'read',
    tags: ['Reputation'],
    summary: 'Reputation of the sending domains',
    description:
      'Per sending domain of the tenant (by name): delivery, bounce, complaint and engagement rates over 1, 7 and 30 days, the warm-up tier with ' +
      "today's cap and count, " +
      'and the trust score 0..100 with its tier (excellent ≥ 90, good ≥ 75, caution ≥ 50, at-risk) and weighted factors. Test-key sends never count.',
    response: z.object({ domains: z.array(domain), generated_at: timestamp }),
    handler: async ({ principal }) => reputationOf({ sql: ctx.sql, clock: ctx.clock, warmup: ctx.config.warmup }, principal.tenant.id),
  });
};
