// Segments of the caller's tenant: saved rule sets over contacts (create, list, read, update, delete), counted when used, and a preview count.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { LIMITS } from '../../shared/audiences/segments/fields.js';
import {
  changeSegment,
  createSegment,
  getSegment,
  listSegmentPage,
  MAX_NAME_LENGTH,
  previewCount,
  removeSegment,
  segmentCount,
  viewSegment,
  type SegmentView,
} from '../../shared/audiences/segments/service.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Segments'];

const LANGUAGE =
  'A definition is a group `{ op: "AND" | "OR", rules: [...] }`; each rule is a nested group or one of ' +
  '`{ type: "field", field, operator, value }` (field: email, first_name … crm_lead_id, status, best_send_hour, created_at, updated_at, ' +
  'or custom_fields.<key>, compared by the catalog type), `{ type: "list", operator: "in" | "not_in", list_id }` and ' +
  '`{ type: "engagement", event: "opened" | "clicked", operator: "within" | "not_within", days: 1..365 }`. ' +
  'Text operators (case-insensitive): eq, neq, contains, not_contains, starts_with, ends_with, in, not_in, exists, not_exists. ' +
  'Numbers: eq, neq, gt, gte, lt, lte, in, not_in, exists, not_exists. Booleans: eq, neq, exists, not_exists. status: eq, neq, in, not_in. ' +
  'Dates and date-times: on, not_on, before, after, on_or_before, on_or_after (a YYYY-MM-DD day, for date-times also an RFC 3339 instant), ' +
  'within_last_days, not_within_last_days, within_next_days (whole days), exists, not_exists. Every negation matches exactly the contacts ' +
  `its positive form does not, including those without a value. At most ${LIMITS.maxRules} rules and ${LIMITS.maxDepth} levels of groups. ` +
  'Deleted contacts are left out unless a rule names status; erased contacts always are. A bad rule is 422 naming its path, e.g. definition.rules[2].operator.';

const DEADLINE_NOTE =
  'Counting has a deadline (config/queries.yaml, 5 s by default): a rule set that takes longer is stopped and answers 422 validation_error ' +
  '"definition: this rule set is too expensive to evaluate…". Counts, searches, analytics reads and exports of one account run at most 2 at once ' +
  '(more wait up to 1 s, then 429 rate_limited with Retry-After).';

const name = z.string().max(MAX_NAME_LENGTH).describe('Shown in lists; surrounding spaces are dropped');
const definition = z.record(z.string(), z.unknown()).describe(LANGUAGE);
const staleRules = z
  .array(z.object({ path: z.string(), problem: z.string() }))
  .describe(
    'Rules of the saved definition whose custom field or list has since been deleted (or whose field changed type): each matches no contact until ' +
      'the segment is updated',
  );

const segment = z.object({
  id: z.string(),
  name: z.string(),
  definition: z.record(z.string(), z.unknown()),
  stale_rules: staleRules,
  created_at: timestamp,
  updated_at: timestamp,
});

function present({ row, staleRules: stale }: SegmentView): z.input<typeof segment> {
  return {
    id: row.id,
    name: row.name,
    definition: row.definition as unknown as Record<string, unknown>,
    stale_rules: stale,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const segmentId = idParam('id');

export const segmentRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/segments',
    auth: 'any',
    scope: 'lists:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List segments',
    description: "The tenant's segments, newest first, with their definitions. Cursor pagination: pass next_cursor as ?after=.",
    query: cursorPagination,
    list: true,
    response: segment,
    handler: async ({ principal, query }) => {
      const page = await listSegmentPage(ctx.sql, principal.tenant.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/segments',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Create a segment',
    description:
      `Saves a named definition after checking it against the custom-field catalog and the tenant's lists. Segments are evaluated when used (count, ` +
      `send), not when saved. ${LANGUAGE}`,
    body: z.strictObject({ name, definition }),
    status: 201,
    response: segment,
    handler: async ({ principal, body, ip }) => {
      const row = await createSegment(ctx, principal.tenant.id, actorOf(principal, ip), body);
      return present(await viewSegment(ctx.sql, principal.tenant.id, row));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/segments/preview',
    auth: 'any',
    scope: 'lists:read',
    // Reads only: a viewer may preview.
    role: 'viewer',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Count the contacts of a definition',
    description: `How many contacts a definition selects now, without saving it or sending anything. ${DEADLINE_NOTE} ${LANGUAGE}`,
    body: z.strictObject({ definition }),
    response: z.object({ count: z.number().int() }),
    handler: async ({ principal, body }) => ({ count: await previewCount(ctx, principal.tenant.id, body.definition) }),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/segments/:id',
    auth: 'any',
    scope: 'lists:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a segment',
    description: 'The segment with its definition as saved, and the rules that no longer check against the catalog or lists (stale_rules).',
    params: segmentId,
    errors: [404],
    response: segment,
    handler: async ({ principal, params }) => present(await getSegment(ctx.sql, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/segments/:id/count',
    auth: 'any',
    scope: 'lists:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Count the contacts of a segment',
    description:
      'How many contacts the saved segment selects now (nothing is sent). A rule whose custom field or list was deleted after saving ' +
      'matches no contact — a segment never grows because part of it vanished — and is listed in stale_rules. ' +
      DEADLINE_NOTE,
    params: segmentId,
    errors: [404],
    response: z.object({ count: z.number().int(), stale_rules: staleRules }),
    handler: async ({ principal, params }) => {
      const { count, staleRules: stale } = await segmentCount(ctx, principal.tenant.id, params.id);
      return { count, stale_rules: stale };
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/segments/:id',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Update a segment',
    description: `Changes the name, the definition or both; a new definition is checked like a new segment's. ${LANGUAGE}`,
    params: segmentId,
    body: z.strictObject({ name: name.optional(), definition: definition.optional() }),
    errors: [404],
    response: segment,
    handler: async ({ principal, params, body, ip }) => {
      const row = await changeSegment(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body);
      return present(await viewSegment(ctx.sql, principal.tenant.id, row));
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/segments/:id',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete a segment',
    description: 'Deletes the segment; contacts and lists are untouched.',
    params: segmentId,
    errors: [404],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params, ip }) => {
      await removeSegment(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { deleted: true, id: params.id };
    },
  });
};
