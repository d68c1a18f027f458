// Campaigns of the caller's tenant: create, search, read with progress, change, delete, duplicate, the MD5 list, and the lifecycle (schedule, send, pause,
// resume, cancel).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf, type Principal } from '../../shared/accounts/auth/principal.js';
import { MAX_NAME_LENGTH, MAX_SHORT_TEXT } from '../../shared/campaigns/fields.js';
import {
  cancelCampaign,
  pauseCampaign,
  resumeCampaign,
  scheduleCampaign,
  sendCampaign,
  unscheduleCampaign,
  type Caller,
} from '../../shared/campaigns/lifecycle.js';
import { CAMPAIGN_STATUSES, WAITING_REASONS } from '../../shared/campaigns/statuses.js';
import {
  changeCampaign,
  createCampaign,
  duplicateCampaign,
  getCampaign,
  listCampaignPage,
  removeCampaign,
  setMd5List,
} from '../../shared/campaigns/service.js';
import { validationError } from '../../shared/kernel/errors.js';
import { replyWithQuota } from '../quota-headers.js';
import { defineRoute } from '../route.js';
import { idParam, pagination, statusResult } from '../schemas/common.js';
import { campaign, campaignSummary, presentCampaign, presentSummary } from '../schemas/campaign.js';
import { idempotencyKeyOf } from '../idempotency-key.js';
import { sendForecast } from '../schemas/forecast.js';
import { campaignForecast } from '../../shared/campaigns/forecast.js';

const TAGS = ['Campaigns'];

const sendResult = z.object({ campaign_id: z.string(), status: z.enum(CAMPAIGN_STATUSES), forecast: sendForecast.nullable() });

const text = (what: string) => z.string().max(600_000).nullable().optional().describe(what);
const short = (what: string) => z.string().max(1000).nullable().optional().describe(`${what}; at most ${MAX_SHORT_TEXT} characters, one line`);
const id = (what: string) => z.string().max(64).nullable().optional().describe(what);

/** The fields a sender sets; absent: unchanged, null or "": cleared (the target and name excepted). */
const fields = {
  name: z.string().max(1000).optional().describe(`1..${MAX_NAME_LENGTH} characters, one line`),
  subject: text('Subject (Liquid); may be left to the template'),
  subject_b: text('Variant B subject (Liquid), for an A/B test'),
  preheader_text: text('Preheader (Liquid): the hidden first line of the HTML body inboxes show after the subject'),
  body_html: text('HTML body (Liquid, output HTML-escaped); may be left to the template'),
  body_text: text('Plain-text body (Liquid); may be left to the template'),
  from_email: z
    .string()
    .max(1000)
    .nullable()
    .optional()
    .describe('Sender address at a verified sending domain of the tenant; when unset, the default sender (GET /settings/sender)'),
  from_name: short("Sender display name; when unset, the stored default sender's"),
  reply_to: z.string().max(1000).nullable().optional().describe("Reply-To address; when unset, the stored default sender's"),
  list_id: id('Target list (exactly one of list_id and segment_id)'),
  segment_id: id('Target segment, evaluated when sending starts'),
  template_id: id('A stored template supplying the subject and bodies the campaign leaves empty'),
  ab_split_pct: z
    .number()
    .int()
    .nullable()
    .optional()
    .describe('A/B test: the share of the target (1..100 %) split evenly between subject (a) and subject_b (b); null: no test'),
  ab_metric: z.enum(['open', 'click']).optional().describe('What decides the A/B test (default open)'),
  send_time_optimization: z.boolean().optional().describe('Stored toggle only: per-contact send times do not exist yet'),
  utm_tagging: z.boolean().optional().describe('Append utm_source, utm_medium and utm_campaign to the links of body_html at send time'),
  utm_source: short('utm_source; unset: mailpath'),
  utm_medium: short('utm_medium; unset: email'),
  utm_campaign: short('utm_campaign; unset: a slug of the campaign name (spring-sale-2026), or the campaign id when the name has no letter or digit'),
  track_opens: z.boolean().optional().describe('Open tracking (default true)'),
  track_clicks: z.boolean().optional().describe('Click tracking (default true)'),
};

const campaignId = idParam('id');

const callerOf = (principal: Principal, ip: string): Caller => ({
  tenantId: principal.tenant.id,
  actor: actorOf(principal, ip),
  mode: principal.key?.mode ?? 'live',
});

const STATUS_NOTE = `Statuses: ${CAMPAIGN_STATUSES.join(', ')}; waiting_reason: ${WAITING_REASONS.join(', ')} (docs/audiences-and-campaigns.md: Campaigns).`;

export const campaignRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const write = { auth: 'any' as const, scope: 'campaigns:write' as const, rateLimit: 'write' as const, tags: TAGS };
  const read = { auth: 'any' as const, scope: 'campaigns:read' as const, rateLimit: 'read' as const, tags: TAGS };

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/campaigns',
    summary: 'List campaigns',
    description:
      "The tenant's campaigns, newest first, each with its progress (bodies left out: has_body_html, has_body_text). q: a case-insensitive substring " +
      'of the name or the subject (blank: all). limit (1..200, default 50) and offset page the list; total counts the matches.',
    query: pagination.extend({ q: z.string().max(1000).optional().describe('Text the name or subject contains, any case') }),
    response: z.object({ items: z.array(campaignSummary), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
    handler: async ({ principal, query }) => {
      const page = await listCampaignPage(ctx.sql, principal.tenant.id, query);
      return { ...page, items: page.items.map(presentSummary) };
    },
  });

  defineRoute(app, {
    ...write,
    method: 'POST',
    url: '/campaigns',
    summary: 'Create a campaign',
    description:
      'A new draft. name is required; the target is exactly one of list_id and segment_id (422 otherwise). Liquid parts are parsed now (422 naming ' +
      'the field). Answers 200 with the campaign.',
    body: z.strictObject(fields),
    response: campaign,
    handler: async ({ principal, body, ip }) => presentCampaign(await createCampaign(ctx, principal.tenant.id, actorOf(principal, ip), body)),
  });

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/campaigns/:id',
    summary: 'Read a campaign',
    description:
      `The campaign with its progress (targeted, skipped by reason, queued, sent, delivered, deferred, failed, remaining) and why it waits, if it does. ` +
      `${STATUS_NOTE}`,
    params: campaignId,
    errors: [404],
    response: campaign,
    handler: async ({ principal, params }) => presentCampaign(await getCampaign(ctx.sql, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    ...write,
    method: 'PATCH',
    url: '/campaigns/:id',
    summary: 'Change a campaign',
    description:
      'Changes the fields given, while the campaign is a draft or scheduled (409 after). Giving list_id switches the target to that list (segment_id ' +
      'cleared) and the other way round; both at once, or clearing the target, is 422.',
    params: campaignId,
    body: z.strictObject(fields),
    errors: [404, 409],
    response: campaign,
    handler: async ({ principal, params, body, ip }) =>
      presentCampaign(await changeCampaign(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body)),
  });

  defineRoute(app, {
    ...write,
    method: 'DELETE',
    url: '/campaigns/:id',
    summary: 'Delete a draft campaign',
    description: 'Deletes a draft (409 in any other status: cancel a campaign instead).',
    params: campaignId,
    errors: [404, 409],
    response: statusResult,
    handler: async ({ principal, params, ip }) => {
      await removeCampaign(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { status: 'deleted' };
    },
  });

  defineRoute(app, {
    ...write,
    method: 'POST',
    url: '/campaigns/:id/duplicate',
    summary: 'Duplicate a campaign',
    description:
      'A new draft named "<name> (copy)" with the original\'s subject, bodies, preheader, template, target, sender, A/B, UTM and tracking settings ' +
      'and MD5 list (any status; never its schedule or progress).',
    params: campaignId,
    status: 201,
    errors: [404],
    response: z.object({ id: z.string(), name: z.string(), status: z.enum(CAMPAIGN_STATUSES) }),
    handler: async ({ principal, params, ip }) => {
      const row = await duplicateCampaign(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { id: row.id, name: row.name, status: row.status };
    },
  });

  defineRoute(app, {
    ...write,
    method: 'POST',
    url: '/campaigns/:id/schedule',
    summary: 'Schedule a campaign',
    description:
      'A draft becomes scheduled: it starts sending at scheduled_at (in the future, else 422), also after a restart. It must be sendable now (target, ' +
      'a From address at a verified domain: its from_email or the default sender, 422 when neither, 412 while the tenant has no verified domain; ' +
      'content) and is checked again then (failed if it no longer is). 409 unless draft.',
    params: campaignId,
    body: z.strictObject({ scheduled_at: z.string().max(100).describe('When to start (RFC 3339 with a zone)') }),
    errors: [404, 409, 412],
    response: campaign,
    handler: async ({ principal, params, body, ip }) => {
      const at = z.iso.datetime({ offset: true }).safeParse(body.scheduled_at);
      if (!at.success) throw validationError('scheduled_at', 'must be an RFC 3339 timestamp with a zone, e.g. 2026-12-01T09:00:00Z');
      return presentCampaign(await scheduleCampaign(ctx, callerOf(principal, ip), params.id, new Date(at.data)));
    },
  });

  defineRoute(app, {
    ...write,
    method: 'DELETE',
    url: '/campaigns/:id/schedule',
    summary: 'Unschedule a campaign',
    description: 'A scheduled campaign goes back to draft (409 unless scheduled).',
    params: campaignId,
    errors: [404, 409],
    response: statusResult,
    handler: async ({ principal, params, ip }) => ({ status: (await unscheduleCampaign(ctx, callerOf(principal, ip), params.id)).row.status }),
  });

  defineRoute(app, {
    ...write,
    method: 'POST',
    url: '/campaigns/:id/send',
    idempotent: true,
    summary: 'Send a campaign now',
    description:
      'A draft or scheduled campaign starts sending (202 {campaign_id, status: sending}); 409 in any other status. Checked first: a target, ' +
      'a From address at a verified sending domain: from_email, else the default sender (GET /settings/sender; derived from the oldest verified ' +
      'domain until one is set); 422 when there is neither or it is at another domain, 412 no_verified_domain while the tenant has none (a test key: ' +
      'any added domain, and every ' +
      'send is simulated), content (422 naming the field). The recipients are fixed when the fan-out starts (a segment evaluated then). ' +
      'Idempotency-Key header (optional): the same key for the same campaign within 24 h answers the first answer again (Idempotent-Replayed: true); ' +
      'the same key for another campaign is 409. Every answer carries X-Quota-Used, X-Quota-Cap, X-Quota-Remaining (and X-Quota-Warning: 1 from 80 % ' +
      "of the cap): this month's usage when answered (the campaign's sends count as its fan-out queues them). At or over the cap a live " +
      "send starts nothing: 402 quota_exceeded. The answer's forecast says how many go today and when the rest goes, as " +
      "GET /campaigns/{id}/forecast (null when the target could not be counted within the tenant's query budget).",
    params: campaignId,
    status: 202,
    errors: [402, 404, 409, 412],
    response: sendResult,
    handler: async ({ principal, params, ip, request, reply }) => {
      try {
        const result = await sendCampaign(ctx, callerOf(principal, ip), params.id, idempotencyKeyOf(request.headers['idempotency-key']));
        if (result.replayed) reply.header('Idempotent-Replayed', 'true');
        await replyWithQuota(ctx, reply, principal.tenant.id);
        // An answer stored before forecasts existed has none.
        return { ...result.answer, forecast: result.answer.forecast ?? null } as z.input<typeof sendResult>;
      } catch (err) {
        await replyWithQuota(ctx, reply, principal.tenant.id, err);
        throw err;
      }
    },
  });

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/campaigns/:id/forecast',
    summary: "Forecast a campaign's send",
    description:
      'What sending the campaign now will do (or, while it sends, what is left): its recipients, how many go out today under the ' +
      "sending domain's warm-up allowance and the month's quota, what holds the rest back, and the sends per UTC day until the last " +
      'goes, assuming the tier holds. A sending or paused campaign is forecast in the mode it was started in, any other in the ' +
      "caller's (a test key: simulated, nothing counted). Counting the target is a tenant-shaped query: 429 past the tenant's query " +
      'budget, 422 when the segment is too expensive. 422 when the campaign has no sender at all (see PUT /settings/sender).',
    params: campaignId,
    errors: [404],
    response: sendForecast,
    handler: async ({ principal, params, ip }) => campaignForecast(ctx, principal.tenant.id, params.id, callerOf(principal, ip).mode),
  });

  for (const [action, run, summary, description] of [
    [
      'pause',
      pauseCampaign,
      'Pause a sending campaign',
      'A sending campaign stops after the batch in hand (409 unless sending). Nothing queued is taken back.',
    ],
    [
      'resume',
      resumeCampaign,
      'Resume a paused campaign',
      'A paused campaign (paused by a caller, at the monthly quota: waiting_reason quota_exceeded, or over the render budget: waiting_reason render_budget ' +
        'with paused_reason) goes on where it stopped (409 unless paused); recipients left pending by the render budget are rendered again.',
    ],
    [
      'cancel',
      cancelCampaign,
      'Cancel a campaign',
      'A draft, scheduled, sending or paused campaign is cancelled for good (409 otherwise); its unsent recipients become skipped (cancelled) shortly after.',
    ],
  ] as const) {
    defineRoute(app, {
      ...write,
      method: 'POST',
      url: `/campaigns/:id/${action}`,
      summary,
      description,
      params: campaignId,
      errors: [404, 409],
      response: campaign,
      handler: async ({ principal, params, ip }) => presentCampaign(await run(ctx, callerOf(principal, ip), params.id)),
    });
  }

  defineRoute(app, {
    ...write,
    method: 'PATCH',
    url: '/campaigns/:id/md5-list',
    summary: 'Attach or clear an MD5 suppression list',
    description:
      "list_id: one of the tenant's MD5 lists (422 otherwise): recipients whose address (lower-cased, MD5) is on it are skipped when sending; null " +
      'clears it. Draft or scheduled only (409 after).',
    params: campaignId,
    body: z.strictObject({ list_id: z.string().max(64).nullable().describe('An MD5 list id, or null') }),
    errors: [404, 409],
    response: campaign,
    handler: async ({ principal, params, body, ip }) =>
      presentCampaign(await setMd5List(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body.list_id)),
  });
};
