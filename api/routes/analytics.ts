// Analytics of the caller's tenant: cohort retention, hourly/daily rollups, deliverability per mailbox provider, automatic per-provider suppressions and the
// trust score.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { COHORT_WEEKS, CohortRetention } from '../../shared/engagement/analytics/cohort.js';
import { ESP_WINDOW_DAYS, espScores } from '../../shared/engagement/analytics/esp-scores.js';
import {
  BLOCK_THRESHOLD,
  DEFERRAL_THRESHOLD,
  RECENT_DAYS,
  REFUSAL_WINDOW_MINUTES,
  SUPPRESSION_HOURS,
  espSuppressions,
} from '../../shared/engagement/analytics/esp-suppressions.js';
import { LIVE_HOURS_MAX, ROLLUP_DEFAULT_DAYS, ROLLUP_MAX_DAYS, rollupReport } from '../../shared/engagement/analytics/rollup.js';
import { tenantTrustScore } from '../../shared/engagement/analytics/trust.js';
import { MAILBOX_PROVIDERS } from '../../shared/deliverability/mailbox-providers.js';
import { TRUST_TIERS } from '../../shared/engagement/reputation/trust-score.js';
import { defineRoute } from '../route.js';
import { queryFlag, timestamp } from '../schemas/common.js';

const TAGS = ['Analytics'];
const share = z.number().min(0).max(1).nullable();
const rfc3339 = z.iso.datetime({ offset: true });

const cohortRow = z.object({
  week_start: z.string().describe('Monday (UTC) of the acquisition week, YYYY-MM-DD'),
  size: z.number().int().describe('Contacts created that week'),
  active: z
    .array(z.number().int().nullable())
    .describe(
      'Per week since acquisition (index 0 = the acquisition week): contacts of the cohort with at least one event of the metric; null = that week ' +
        'has not begun',
    ),
  retention: z.array(share).describe('active / size per week, 4 decimals; null for weeks not begun (or an empty cohort)'),
});

const bucket = z.object({
  start: timestamp.describe('Start of the hour or day (UTC)'),
  sent: z.number().int().describe('Sends accepted and not dropped by a gate'),
  delivered: z.number().int().describe('Delivered events: the receiving server accepted the message'),
  bounced: z.number().int().describe('Bounce events (hard and soft)'),
  opened: z.number().int().describe('Open events; machine opens left out unless include_machine'),
  clicked: z.number().int().describe('Click events; scanner clicks left out unless include_machine'),
  complained: z.number().int().describe('Complaint (feedback-loop) events'),
});

const espItem = z.object({
  esp: z.enum(MAILBOX_PROVIDERS),
  sent: z.number().int(),
  delivered: z.number().int(),
  deferred: z
    .number()
    .int()
    .describe(
      'Deferral events: a temporary refusal the delivery path retries later, or a send held by a gate (warm-up cap, per-provider cap or suppression) ' +
        'until later; a send deferred twice counts twice. In no rate: a deferral is not an outcome yet',
    ),
  bounced: z.number().int(),
  complained: z.number().int(),
  engaged: z.number().int().describe('Sends with a human open or click (machine opens and scanner clicks left out)'),
  delivery_rate: share.describe('delivered / (delivered + bounced)'),
  bounce_rate: share.describe('bounced / (delivered + bounced)'),
  complaint_rate: share.describe('complained / delivered'),
  engagement_rate: share.describe('engaged / delivered, at most 1'),
  score: z.number().int().min(0).max(100).nullable().describe('The trust-score formula over these rates; null without delivered or bounced mail'),
  tier: z.enum(TRUST_TIERS).nullable(),
});

const suppressionItem = z.object({
  id: z.string(),
  esp: z.enum(MAILBOX_PROVIDERS),
  reason: z.enum(['blocked', 'deferral_storm']),
  refusals: z.number().int().describe('Refusals of that kind counted in the triggering window'),
  window_minutes: z.number().int(),
  sample_reply: z.string().nullable().describe('The refusal that reached the threshold, as the provider worded it'),
  active: z.boolean().describe('Not revoked and expires_at in the future'),
  triggered_at: timestamp,
  expires_at: timestamp,
  revoked_at: timestamp.nullable(),
});

export const analyticsRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  // One cache of each per process: cohort answers (an hour) and custom domains' providers (MX look-ups).
  const cohorts = new CohortRetention({ queries: ctx.queries, clock: ctx.clock });

  defineRoute(app, {
    method: 'GET',
    url: '/analytics/cohort-retention',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Cohort retention by acquisition week',
    description:
      `Contacts grouped by the week (Monday 00:00 UTC) they were created, for the last \`weeks\` weeks including the current one; for each cohort ` +
      `and each week since, ` +
      `how many had at least one event of the metric (sent: a send not dropped; opened / clicked: human opens and clicks, machine opens and scanner ` +
      `clicks left out), matched by address. ` +
      `Cells for weeks that have not begun are null; the current week counts so far. Answers are cached in process for one hour per (tenant, metric, weeks).`,
    query: z.object({
      cohort: z.enum(['acquisition_week']).default('acquisition_week').describe('Only acquisition_week in v1'),
      metric: z.enum(['opened', 'clicked', 'sent']).default('opened'),
      weeks: z.coerce
        .number()
        .int()
        .min(COHORT_WEEKS.min)
        .max(COHORT_WEEKS.max)
        .default(COHORT_WEEKS.default)
        .describe(`${COHORT_WEEKS.min}..${COHORT_WEEKS.max}, default ${COHORT_WEEKS.default}`),
    }),
    response: z.object({
      cohort: z.literal('acquisition_week'),
      metric: z.enum(['opened', 'clicked', 'sent']),
      max_weeks: z.number().int(),
      cohorts: z.array(cohortRow).describe('Oldest acquisition week first'),
    }),
    handler: async ({ principal, query }) => cohorts.report(principal.tenant.id, query.metric, query.weeks),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/analytics/rollup',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Event counts per hour or day',
    description:
      'Sent, delivered, bounced, opened, clicked and complained per UTC hour or day, ' +
      'every bucket from the one holding since to the one holding until (zeros included). ' +
      `Read from rollup tables that a scheduled worker (analytics-rollup) refreshes every 5 minutes; the latest ${LIVE_HOURS_MAX} hours of the range ` +
      `it has not ` +
      `refreshed since their last event (the current hour, right after a send) are counted from the events on read, so a read right after a send counts it. ` +
      `The range is capped at ${ROLLUP_MAX_DAYS} days (422 validation_error beyond).`,
    query: z.object({
      since: rfc3339.optional().describe(`RFC 3339; default until minus ${ROLLUP_DEFAULT_DAYS} days`),
      until: rfc3339.optional().describe('RFC 3339; default now'),
      granularity: z.enum(['hour', 'day']).default('day'),
      include_machine: queryFlag.default(false).describe('Count machine opens and scanner clicks too (default false)'),
    }),
    errors: [422],
    response: z.object({ buckets: z.array(bucket), granularity: z.enum(['hour', 'day']), since: timestamp, until: timestamp }),
    handler: async ({ principal, query }) =>
      ctx.queries.run(principal.tenant.id, 'analytics', (tx) =>
        rollupReport({ sql: tx, clock: ctx.clock }, principal.tenant.id, {
          ...(query.since !== undefined ? { since: new Date(query.since) } : {}),
          ...(query.until !== undefined ? { until: new Date(query.until) } : {}),
          granularity: query.granularity,
          includeMachine: query.include_machine,
        }),
      ),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/analytics/esp-scores',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Deliverability per mailbox provider',
    description:
      `Outcomes of the last ${ESP_WINDOW_DAYS} days per mailbox provider (gmail, outlook, yahoo, aol, icloud, proton, fastmail, other). A recipient's ` +
      `provider comes from its domain ` +
      `(gmail.com, hotmail.com …) or, for a custom domain, from its MX hosts (Google Workspace → gmail, Microsoft 365 → outlook …), looked up and cached. ` +
      `Each provider gets a 0..100 score by the trust-score formula over its delivery, bounce, complaint and engagement rates; deferrals are counted ` +
      `beside them. Sorted by score descending, ` +
      `providers without outcomes after those with, other last. window_end is the end of the window (now).`,
    response: z.object({ items: z.array(espItem), window_end: timestamp }),
    handler: async ({ principal }) =>
      ctx.queries.run(principal.tenant.id, 'analytics', (tx) =>
        espScores({ sql: tx, clock: ctx.clock, classifier: ctx.providerClassifier }, principal.tenant.id),
      ),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/analytics/esp-suppressions',
    auth: 'any',
    scope: 'reputation:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Automatic per-provider suppressions',
    description:
      `Suppressions the delivery path raised against one mailbox provider: ${BLOCK_THRESHOLD} policy refusals (an x.7.x code or a reply saying blocked, ` +
      `spam, reputation, rate limit) ` +
      `or ${DEFERRAL_THRESHOLD} temporary failures from that provider within a ${REFUSAL_WINDOW_MINUTES}-minute window; each lasts ${SUPPRESSION_HOURS} ` +
      `hours. ` +
      `Lists the active ones (not revoked, expires_at in the future) and every one triggered in the last ${RECENT_DAYS} days, newest triggered_at first.`,
    response: z.object({ items: z.array(suppressionItem), total: z.number().int() }),
    handler: async ({ principal }) => {
      const page = await ctx.queries.run(principal.tenant.id, 'analytics', (tx) => espSuppressions({ sql: tx, clock: ctx.clock }, principal.tenant.id));
      return { ...page, items: page.items.map((i) => ({ ...i, esp: i.esp as (typeof MAILBOX_PROVIDERS)[number] })) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/analytics/trust-score',
    auth: 'any',
    scope: 'reputation:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'The account trust score',
    description:
      'The trust score of all the tenant\'s live sends of the last 30 days together, by the reputation formula (docs/deliverability.md, "Reputation"): ' +
      'weighted delivery, bounce, complaint and ' +
      'engagement factors, tier excellent ≥ 90, good ≥ 75, caution ≥ 50, at-risk below. Without delivered or bounced live mail in 30 days there is ' +
      'nothing to judge: ' +
      'the new-sender baseline (every factor 0.5, so score 50, tier caution) with basis no_sends.',
    response: z.object({
      score: z.number().int().min(0).max(100),
      tier: z.enum(TRUST_TIERS),
      factors: z.array(z.object({ name: z.enum(['delivery', 'bounce', 'complaint', 'engagement']), weight: z.number(), value: z.number().describe('0..1') })),
      basis: z.enum(['sends', 'no_sends']).describe('sends: computed from the 30-day outcomes; no_sends: the new-sender baseline'),
      updated_at: timestamp.describe('When the score was computed (it is computed on each call)'),
    }),
    handler: async ({ principal }) =>
      ctx.queries.run(principal.tenant.id, 'analytics', (tx) => tenantTrustScore({ sql: tx, clock: ctx.clock }, principal.tenant.id)),
  });
};
