// API key activity for the signed-in user's tenant: usage per key and day, one key's activity, its request counts now.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ACTIVITY_DAYS, keyActivity, keyUsage, rateLimitStatus, TOP_ENDPOINTS } from '../../shared/accounts/keys/activity.js';
import { defineRoute } from '../route.js';
import { idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['API keys'];
const day = z.object({ date: z.string().describe('UTC day, YYYY-MM-DD'), count: z.number().int() });
const LAG = ' Counts are written in batches every `key_activity.flush_interval_ms` (config/limits.yaml, 5 s), so the latest requests may be missing.';

export const apiKeyActivityRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/api-keys/usage',
    auth: 'user',
    tags: TAGS,
    summary: 'Requests per API key and day',
    description:
      'One item per non-revoked key: its requests per UTC day over the last `days` days (today included, oldest first), their total, ' +
      'and when and from which address it was last used. Requests refused for the key (401 after revocation, 403, 429) count too.' +
      LAG,
    query: z.object({ days: z.coerce.number().int().min(1).max(30).default(7).describe('Days to cover, 1..30') }),
    response: z.object({
      days: z.number().int(),
      items: z.array(
        z.object({
          key_id: z.string(),
          name: z.string(),
          prefix: z.string(),
          total: z.number().int(),
          series: z.array(day),
          last_used_at: timestamp.nullable().describe('Updated at most once a minute'),
          last_used_ip: z.string().nullable(),
        }),
      ),
    }),
    handler: async ({ principal, query }) => ({
      days: query.days,
      items: (await keyUsage(ctx, principal.tenant.id, query.days)).map((u) => ({
        key_id: u.key.id,
        name: u.key.name,
        prefix: u.key.prefix,
        total: u.total,
        series: u.series,
        last_used_at: iso(u.key.last_used_at),
        last_used_ip: u.key.last_used_ip,
      })),
    }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/api-keys/:keyID/activity',
    auth: 'user',
    tags: TAGS,
    summary: "An API key's activity over 30 days",
    description:
      `Over the last ${ACTIVITY_DAYS} UTC days: requests per day, the ${TOP_ENDPOINTS} most called routes (method and pattern, with their ` +
      'failed answers), the answers per status code, the 95th percentile latency (estimated from latency buckets, so exact to the bucket: ' +
      'within about a third of the value), and whether the key looks suspicious, with the reasons: a burst of 401/403 answers, a client ' +
      'address new to the key, an error-rate spike against its own baseline (thresholds in config/limits.yaml). Revoked keys are shown too.' +
      LAG,
    params: idParam('keyID'),
    errors: [404],
    response: z.object({
      calls_per_day: z.array(day),
      top_endpoints: z.array(z.object({ route: z.string().describe('e.g. "GET /templates/:id"'), count: z.number().int(), errors: z.number().int() })),
      status_codes: z.array(z.object({ status: z.number().int(), count: z.number().int() })),
      p95_latency_ms: z.number().nullable().describe('Null without requests'),
      suspicious: z.object({ flag: z.boolean(), reasons: z.array(z.string()) }),
    }),
    handler: ({ principal, params }) => keyActivity(ctx, principal.tenant.id, params.keyID),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/api-keys/:keyID/rate-limit-status',
    auth: 'user',
    tags: TAGS,
    summary: "An API key's request counts now",
    description:
      'Requests made with the key in the current UTC minute (the rate-limit window), in the current minute and the 59 before it, ' +
      "and since 00:00 UTC. Includes this process's unwritten counts; other processes' last few seconds may be missing.",
    params: idParam('keyID'),
    errors: [404],
    response: z.object({
      key_id: z.string(),
      key_name: z.string(),
      requests_last_minute: z.number().int(),
      requests_last_hour: z.number().int(),
      requests_today: z.number().int(),
    }),
    handler: ({ principal, params }) => rateLimitStatus(ctx, app.keyActivity, principal.tenant.id, params.keyID),
  });
};
