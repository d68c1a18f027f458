// Goals of the caller's tenant (URL match rules with revenue) and a campaign's goal conversions.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { requireCampaign } from '../../shared/campaigns/service.js';
import { campaignGoalConversions } from '../../shared/engagement/goals/conversions.js';
import type { GoalRow } from '../../shared/engagement/goals/queries.js';
import { MATCH_TYPES, MAX_MATCH_VALUE, MAX_PATTERN, MAX_PROGRAM_SIZE } from '../../shared/engagement/goals/rules.js';
import { changeGoal, createGoal, getGoal, listGoalPage, MAX_NAME_LENGTH, removeGoal } from '../../shared/engagement/goals/service.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Goals'];

const fields = {
  name: z.string().max(1000).describe(`1..${MAX_NAME_LENGTH} characters once trimmed; unique within the account, compared without case`),
  match_type: z
    .enum(MATCH_TYPES)
    .describe(
      'exact: the clicked URL equals match_value; prefix: it starts with match_value; regex: match_value (a JavaScript regex, run by a linear-time ' +
        'engine) finds a match in it',
    ),
  match_value: z
    .string()
    .max(MAX_MATCH_VALUE * 2)
    .describe(
      `The URL or prefix (at most ${MAX_MATCH_VALUE} characters, compared as written), or the regex: at most ${MAX_PATTERN} characters, compilable, ` +
        `no backreferences or lookaround (lookahead, lookbehind), repeat counts at most 1000, compiled size at most ${MAX_PROGRAM_SIZE}`,
    ),
  revenue_cents: z
    .number()
    .int()
    .min(0)
    .max(1e12)
    .nullable()
    .describe('Revenue per conversion in cents; with revenue_param, the fallback when the URL has no usable value; null: 0'),
  revenue_param: z
    .string()
    .max(1000)
    .nullable()
    .describe('A query parameter of the clicked URL holding the amount in major units with at most 2 decimals (49.99 → 4999 cents); null: fixed revenue only'),
};

const goal = z.object({
  id: z.string(),
  name: z.string(),
  match_type: z.enum(MATCH_TYPES),
  match_value: z.string(),
  revenue_cents: z.number().int().nullable(),
  revenue_param: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

const present = (row: GoalRow): z.input<typeof goal> => ({
  id: row.id,
  name: row.name,
  match_type: row.match_type,
  match_value: row.match_value,
  revenue_cents: row.revenue_cents,
  revenue_param: row.revenue_param,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

const conversions = z.object({
  campaign_id: z.string(),
  total_conversions: z.number().int().describe('Goal-matching clicks (one per goal a click matched), scanner clicks left out'),
  unique_converters: z.number().int().describe('Distinct contacts with at least one conversion'),
  revenue_cents: z.number().int(),
  by_goal: z
    .array(
      z.object({
        goal_id: z.string().nullable().describe('Null for goals deleted after the click'),
        goal_name: z.string().describe("The goal's current name, or '(deleted goal)'"),
        conversions: z.number().int(),
        unique_converters: z.number().int(),
        revenue_cents: z.number().int(),
      }),
    )
    .describe('Sorted by revenue descending'),
});

const goalId = idParam('id');

export const goalRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const read = { auth: 'any', scope: 'campaigns:read', rateLimit: 'read', tags: TAGS } as const;
  const write = { auth: 'any', scope: 'campaigns:write', rateLimit: 'write', tags: TAGS } as const;

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/goals',
    summary: 'List goals',
    description: "The tenant's goals, newest first. Cursor pagination: pass next_cursor as ?after=.",
    query: cursorPagination,
    list: true,
    response: goal,
    handler: async ({ principal, query }) => {
      const page = await listGoalPage(ctx.sql, principal.tenant.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    ...write,
    method: 'POST',
    url: '/goals',
    summary: 'Create a goal',
    description:
      'A click whose URL matches the goal counts as a conversion, recorded with the click from now on (earlier clicks are not re-read). ' +
      'An unsafe regex is 422 naming match_value; a name the account already uses is 409.',
    body: z.strictObject({ ...fields, revenue_cents: fields.revenue_cents.optional(), revenue_param: fields.revenue_param.optional() }),
    status: 201,
    errors: [409, 422],
    response: goal,
    handler: async ({ principal, body, ip }) => present(await createGoal(ctx, principal.tenant.id, actorOf(principal, ip), body)),
  });

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/goals/:id',
    summary: 'Read a goal',
    description: 'One goal.',
    params: goalId,
    errors: [404],
    response: goal,
    handler: async ({ principal, params }) => present(await getGoal(ctx.sql, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    ...write,
    method: 'PATCH',
    url: '/goals/:id',
    summary: 'Change a goal',
    description:
      'Only the fields sent change; null clears revenue_cents or revenue_param. Applies to clicks from now on: recorded conversions keep their revenue.',
    params: goalId,
    body: z.strictObject({
      name: fields.name.optional(),
      match_type: fields.match_type.optional(),
      match_value: fields.match_value.optional(),
      revenue_cents: fields.revenue_cents.optional(),
      revenue_param: fields.revenue_param.optional(),
    }),
    errors: [404, 409, 422],
    response: goal,
    handler: async ({ principal, params, body, ip }) => present(await changeGoal(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body)),
  });

  defineRoute(app, {
    ...write,
    method: 'DELETE',
    url: '/goals/:id',
    summary: 'Delete a goal',
    description: "Its past conversions stay in campaign reports under goal_id null and goal_name '(deleted goal)'.",
    params: goalId,
    errors: [404],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params, ip }) => {
      await removeGoal(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { deleted: true, id: params.id };
    },
  });

  defineRoute(app, {
    ...read,
    method: 'GET',
    url: '/campaigns/:id/goal-conversions',
    summary: "A campaign's goal conversions",
    description:
      "Conversions of the campaign's recipients: total_conversions, unique_converters (distinct contacts), revenue_cents, and by_goal sorted by revenue " +
      'descending. ' +
      "A goal deleted after the click appears with goal_id null and goal_name '(deleted goal)'. Clicks flagged as a link scanner's are not conversions.",
    params: idParam('id'),
    errors: [404],
    response: conversions,
    handler: async ({ principal, params }) => {
      const campaign = await requireCampaign(ctx.sql, principal.tenant.id, params.id);
      return campaignGoalConversions(ctx.sql, principal.tenant.id, campaign.id);
    },
  });
};
