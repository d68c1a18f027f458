// Saved audit filters: a signed-in user's named audit page states (list, save, delete their own).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createFilter, deleteFilter, FILTER_MAX_BYTES, FILTERS_PER_USER, listFilters, type AuditFilter } from '../../shared/operations/audit/filters.js';
import { defineRoute } from '../route.js';
import { idParam, iso, statusResult } from '../schemas/common.js';

const TAGS = ['Audit'];
const text = z.string().max(FILTER_MAX_BYTES);

const definition = z
  .strictObject({
    q: text.optional().describe('Free-text search'),
    range: text.optional().describe('A named range of the audit page, e.g. 7d'),
    event_type: text.optional().describe('Event name or prefix'),
    actor: text.optional().describe('Actor id or e-mail'),
    date_from: text.optional().describe('Start date as the page holds it'),
    date_to: text.optional().describe('End date as the page holds it'),
  })
  .describe('The audit page state: q, range, event_type, actor, date_from, date_to');

const filter = z.object({
  id: z.string(),
  name: z.string(),
  definition,
  created_at: z.string(),
});

const view = (f: AuditFilter): z.input<typeof filter> => ({ id: f.id, name: f.name, definition: f.definition, created_at: iso(f.created_at) });

export const auditFilterRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/audit-filters',
    auth: 'user',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Saved audit filters',
    description: "The calling user's saved audit filters, newest first (each user sees only their own).",
    response: z.object({ items: z.array(filter) }),
    handler: async ({ principal }) => ({ items: (await listFilters(ctx.sql, principal.tenant.id, principal.user!.id)).map(view) }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/audit-filters',
    auth: 'user',
    role: 'viewer',
    tags: TAGS,
    summary: 'Save an audit filter',
    description:
      `Saves a named audit page state for the calling user. At most ${FILTER_MAX_BYTES} bytes per filter (name and definition as JSON) and ` +
      `${FILTERS_PER_USER} ` +
      `per user; beyond either, 422 validation_error.`,
    body: z.strictObject({ name: z.string().trim().min(1).max(200), definition }),
    status: 201,
    errors: [422],
    response: filter,
    handler: async ({ principal, body }) => {
      const definitionOnly = Object.fromEntries(Object.entries(body.definition).filter(([, v]) => v !== undefined));
      return view(await createFilter(ctx.sql, ctx.clock, { tenantId: principal.tenant.id, userId: principal.user!.id }, body.name, definitionOnly));
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/audit-filters/:id',
    auth: 'user',
    role: 'viewer',
    tags: TAGS,
    summary: 'Delete a saved audit filter',
    description:
      "Deletes one of the calling user's saved filters. A teammate's filter is 403 forbidden (only the row's owner deletes it); another tenant's is 404.",
    params: idParam('id'),
    errors: [403, 404],
    response: statusResult,
    handler: async ({ principal, params }) => {
      await deleteFilter(ctx.sql, { tenantId: principal.tenant.id, userId: principal.user!.id }, params.id);
      return { status: 'deleted' };
    },
  });
};
