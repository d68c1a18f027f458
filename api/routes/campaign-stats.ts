// Campaign analytics of the caller's tenant: stats (one campaign, or many at once), the event feed, the click heat map, the A/B results and declaring the
// A/B winner.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { abResults, finalizeAbTest, type AbResult } from '../../shared/campaigns/ab-test-results.js';
import { campaignEventPage } from '../../shared/campaigns/events-feed.js';
import {
  campaignStats,
  clickHeatmap,
  HEATMAP_URLS,
  parseBatchIds,
  STATS_BATCH_MAX,
  statsBatch,
  TREND_HOURS,
  type CampaignStats,
} from '../../shared/campaigns/stats.js';
import { EVENT_TYPES, type EventRow } from '../../shared/engagement/events/event.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Campaigns'];
const int = z.number().int();
const rate = z.number().describe('A fraction: 0.25 is 25 %');

const counts = {
  sent: int.describe('Accepted for delivery (not dropped by a gate)'),
  delivered: int.describe('Accepted by the receiving server'),
  deferred: int.describe('Temporary failures (each retry counted)'),
  failed: int.describe('Bounced, or dropped when its delivery came due'),
  unique_opens: int.describe('Recipients who opened, machine opens included'),
  unique_human_opens: int.describe('Recipients who opened, machine opens (Apple Mail Privacy Protection, image proxies, bots) left out'),
  total_opens: int,
  unique_clicks: int.describe('Recipients who clicked, scanner clicks included'),
  unique_human_clicks: int.describe('Recipients who clicked, security-scanner clicks left out'),
  total_clicks: int,
  unsubscribes: int,
  bounces: int.describe('hard_bounces + soft_bounces'),
  hard_bounces: int,
  soft_bounces: int,
  complaints: int,
};
const rates = {
  open_rate: rate.describe('unique_opens / delivered'),
  click_rate: rate.describe('unique_clicks / delivered'),
  click_to_open_rate: rate.describe('unique_clicks / unique_opens'),
  bounce_rate: rate.describe('bounces / sent'),
  unsubscribe_rate: rate.describe('unsubscribes / delivered'),
  complaint_rate: rate.describe('complaints / delivered'),
  human_open_rate: rate.describe('unique_human_opens / delivered'),
  human_click_rate: rate.describe('unique_human_clicks / delivered'),
  human_click_to_open_rate: rate.describe('unique_human_clicks / unique_human_opens'),
};
const header = { campaign_id: z.string(), campaign_name: z.string(), status: z.string() };

const stats = z.object({
  ...header,
  ...counts,
  ...rates,
  countries: z
    .array(z.object({ country: z.string().nullable(), unique_opens: int, unique_human_opens: int, unique_clicks: int, unique_human_clicks: int }))
    .describe("Unique opens and clicks by the contact's country field (null: none), most opens first"),
  hourly_trend: z
    .array(z.object({ hour: timestamp, delivered: int, opens: int, clicks: int, unsubscribes: int, bounces: int, complaints: int }))
    .describe(`The last ${TREND_HOURS} hours (UTC, the current one last), every hour present`),
});

const presentStats = (s: CampaignStats): z.input<typeof stats> => ({ ...s, hourly_trend: s.hourly_trend.map((h) => ({ ...h, hour: iso(h.hour) })) });

const variant = z.object({
  variant: z.enum(['a', 'b']),
  subject: z.string().nullable(),
  sent: int,
  delivered: int,
  unique_opens: int,
  unique_human_opens: int,
  unique_clicks: int,
  unique_human_clicks: int,
  open_rate: rate,
  click_rate: rate,
  human_open_rate: rate,
  human_click_rate: rate,
});

const abResult = z.object({
  campaign_id: z.string(),
  has_ab_test: z.boolean(),
  metric: z.enum(['open', 'click']),
  variant_a: variant.nullable(),
  variant_b: variant.nullable(),
  winner: z.enum(['a', 'b']).nullable(),
  winner_declared_at: timestamp.nullable(),
  recommendation: z.string(),
  significance: z
    .object({
      metric: z.enum(['open', 'click']),
      z: z.number(),
      p_value: z.number(),
      significant: z.boolean().describe('|z| ≥ 1.96: significant at 95 % confidence'),
      leader: z.enum(['a', 'b']).nullable(),
      needed_per_variant: int.nullable().describe('Delivered messages per variant to confirm a difference of the observed size (80 % power)'),
      more_per_variant: int.nullable(),
    })
    .nullable(),
});

const presentAb = (r: AbResult): z.input<typeof abResult> => {
  const { significance, ...rest } = r;
  return {
    ...rest,
    winner_declared_at: iso(r.winner_declared_at),
    significance: significance && {
      metric: significance.metric,
      z: significance.z,
      p_value: significance.p_value,
      significant: significance.significant,
      leader: significance.leader,
      needed_per_variant: significance.needed_per_variant,
      more_per_variant: significance.more_per_variant,
    },
  };
};

const campaignEvent = z.object({
  id: z.string(),
  type: z.enum(EVENT_TYPES),
  subtype: z.string().nullable(),
  message_id: z.string().nullable().describe("The send's id"),
  rfc_message_id: z.string().nullable(),
  contact_id: z.string().nullable(),
  recipient: z.string(),
  detail: z.record(z.string(), z.unknown()),
  occurred_at: timestamp,
});

const presentEvent = (e: EventRow): z.input<typeof campaignEvent> => ({
  id: e.id,
  type: e.type,
  subtype: e.subtype,
  message_id: e.send_id,
  rfc_message_id: e.message_id,
  contact_id: e.contact_id,
  recipient: e.recipient,
  detail: e.detail,
  occurred_at: iso(e.occurred_at),
});

const campaignId = idParam('id');

export const campaignStatsRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const read = { auth: 'any' as const, scope: 'campaigns:read' as const, rateLimit: 'read' as const, tags: TAGS };
  const write = { auth: 'any' as const, scope: 'campaigns:write' as const, rateLimit: 'write' as const, tags: TAGS };

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/campaigns/stats-batch',
    summary: 'Stats of many campaigns',
    description:
      `ids: 1..${STATS_BATCH_MAX} comma-separated campaign ids (400 bad_request otherwise). Each of the caller's campaigns among them, newest first, ` +
      "with its counters and rates; a campaign without events has zero counts; unknown ids and other tenants' campaigns are absent.",
    query: z.object({ ids: z.string().max(100_000).optional().describe('Comma-separated campaign ids') }),
    errors: [400],
    response: z.object({ items: z.array(z.object({ ...header, ...counts, ...rates })) }),
    handler: async ({ principal, query }) => ({ items: await statsBatch(ctx.sql, principal.tenant.id, parseBatchIds(query.ids)) }),
  });

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/campaigns/:id/stats',
    summary: 'Campaign stats',
    description:
      'Every counter and rate of the campaign (kept as events happen, so as fast for a million recipients as for ten), unique opens and clicks ' +
      `with and without machine traffic, by country, and an hourly trend of the last ${TREND_HOURS} hours. Rates are fractions; ` +
      'docs/audiences-and-campaigns.md: ' +
      `Campaign stats.`,
    params: campaignId,
    errors: [404],
    response: stats,
    handler: async ({ principal, params }) => presentStats(await campaignStats(ctx.sql, principal.tenant.id, params.id, ctx.clock.now())),
  });

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/campaigns/:id/events',
    summary: 'Campaign events',
    description:
      "The campaign's events, newest first: send, delivered, deferred, bounce, dropped, complaint, open, click, unsubscribe. Filter by type, since " +
      'and recipient. Cursor pages: pass next_cursor as ?after= (limit 1..200, default 50).',
    params: campaignId,
    query: cursorPagination.extend({
      type: z.enum(EVENT_TYPES).optional(),
      since: timestamp.optional().describe('Only events at or after this time'),
      recipient: z.string().max(254).optional().describe('Only events of this recipient address'),
    }),
    errors: [400, 404],
    response: z.object({ items: z.array(campaignEvent), next_cursor: z.string().nullable() }),
    handler: async ({ principal, params, query }) => {
      const page = await campaignEventPage(ctx.sql, principal.tenant.id, params.id, { ...query, since: query.since ? new Date(query.since) : undefined });
      return { items: page.items.map(presentEvent), next_cursor: page.next_cursor };
    },
  });

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/campaigns/:id/click-heatmap',
    summary: 'Click heat map',
    description:
      `The ${HEATMAP_URLS} most clicked URLs of the campaign, clicks descending, each with its raw clicks and pct_of_total: its share (in %) of the ` +
      `clicks of the URLs returned (total_clicks).`,
    params: campaignId,
    errors: [404],
    response: z.object({
      campaign_id: z.string(),
      total_clicks: int,
      by_url: z.array(z.object({ url: z.string(), clicks: int, pct_of_total: z.number() })),
    }),
    handler: async ({ principal, params }) => clickHeatmap(ctx.sql, principal.tenant.id, params.id),
  });

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/campaigns/:id/ab-results',
    summary: 'A/B test results',
    description:
      "Both variants' sent, delivered, open and click counts and rates, the declared winner, and a recommendation from a two-proportion z-test on " +
      "the campaign's ab_metric (human opens or clicks over delivered): whether the difference is significant at 95 % and, if not, about how many " +
      'more sends per variant it needs. has_ab_test is false (variants null) without an A/B split.',
    params: campaignId,
    errors: [404],
    response: abResult,
    handler: async ({ principal, params }) => presentAb(await abResults(ctx.sql, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    ...write,
    method: 'POST',
    url: '/campaigns/:id/ab/finalize',
    summary: 'Declare the A/B winner',
    description:
      'Declares the winner and sends the held remainder with its subject, once: a second finalize is 409. 422 (winner) for a campaign without an ' +
      'A/B test; 409 before the split is made or for a cancelled or failed campaign. Answers the A/B results and released (recipients released).',
    params: campaignId,
    body: z.strictObject({ winner: z.enum(['a', 'b']).describe('The winning variant') }),
    errors: [404, 409],
    response: abResult.extend({ released: int.describe('Held recipients now being sent with the winner') }),
    handler: async ({ principal, params, body, ip }) => {
      const caller = { tenantId: principal.tenant.id, actor: actorOf(principal, ip), mode: principal.key?.mode ?? ('live' as const) };
      const result = await finalizeAbTest(ctx, caller, params.id, body.winner);
      return { ...presentAb(result), released: result.released };
    },
  });
};
