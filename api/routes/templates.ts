// Liquid templates of the caller's tenant: create, list, read, update, delete, and render a preview.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { MAX_PART_BYTES } from '../../shared/sending/templates/liquid.js';
import type { TemplateRow, TemplateSummaryRow } from '../../shared/sending/templates/queries.js';
import {
  changeTemplate,
  createTemplate,
  getTemplate,
  listTemplatePage,
  MAX_NAME_LENGTH,
  removeTemplate,
  renderStored,
} from '../../shared/sending/templates/service.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Templates'];
const KIB = MAX_PART_BYTES / 1024;

const LIQUID_NOTE =
  `Liquid: {{ variable }} output with filters such as default, if/elsif/else/unless/case comparing a field to a literal, for loops, ` +
  `{{ contact.email }}, {{ contact.first_name }} and {{ custom_fields.<key> }}. Unknown filters and include/render/layout are refused when saved. ` +
  `Each part is at most ${KIB} KiB of UTF-8; a syntax error is 422 naming the part with its line and column.`;

const name = z.string().max(MAX_NAME_LENGTH).describe('Unique within the account, compared without case; surrounding spaces are dropped');
const subject = z.string().describe('Subject line (Liquid); rendered on one line');
const bodyHtml = z.string().nullable().describe('HTML body (Liquid); output is HTML-escaped unless `| raw` ends the filters. Null or empty: none');
const bodyText = z.string().nullable().describe('Plain-text body (Liquid), not escaped. Null or empty: none');

const template = z.object({
  id: z.string(),
  name: z.string(),
  subject: z.string(),
  body_html: z.string().nullable(),
  body_text: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

const templateSummary = z.object({
  id: z.string(),
  name: z.string(),
  subject: z.string(),
  has_body_html: z.boolean(),
  has_body_text: z.boolean(),
  created_at: timestamp,
  updated_at: timestamp,
});

const contact = z.strictObject({
  email: z.email().max(254),
  first_name: z.string().max(200).nullable().optional(),
  last_name: z.string().max(200).nullable().optional(),
  custom_fields: z.record(z.string(), z.unknown()).optional().describe('Also reachable as {{ custom_fields.<key> }}'),
});

const rendered = z.object({
  subject: z.string().describe('Rendered subject; line breaks become spaces'),
  html: z.string().nullable().describe('Rendered HTML body; null when the template has none'),
  text: z.string().nullable().describe('Rendered text body; null when the template has none'),
});

function present(row: TemplateRow): z.input<typeof template> {
  return {
    id: row.id,
    name: row.name,
    subject: row.subject,
    body_html: row.body_html,
    body_text: row.body_text,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function presentSummary(row: TemplateSummaryRow): z.input<typeof templateSummary> {
  return {
    id: row.id,
    name: row.name,
    subject: row.subject,
    has_body_html: row.has_body_html,
    has_body_text: row.has_body_text,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

const templateId = idParam('id');

export const templateRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/templates',
    auth: 'any',
    scope: 'templates:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List templates',
    description:
      "The tenant's templates, newest first, without their bodies (has_body_html / has_body_text say which exist; read one template for them). " +
      'q filters on a case-insensitive substring of the name. Cursor pagination: pass next_cursor as ?after=.',
    query: cursorPagination.extend({ q: z.string().max(200).optional().describe('Case-insensitive substring of the name; blank = all') }),
    list: true,
    response: templateSummary,
    handler: async ({ principal, query }) => {
      const page = await listTemplatePage(ctx.sql, principal.tenant.id, query);
      return { ...page, items: page.items.map(presentSummary) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/templates',
    auth: 'any',
    scope: 'templates:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Create a template',
    description:
      `Stores a template with a subject and an HTML body, a text body or both, after parsing every part. ${LIQUID_NOTE} A name already used by the ` +
      `account (in any case) is 409.`,
    body: z.strictObject({ name, subject, body_html: bodyHtml.optional(), body_text: bodyText.optional() }),
    status: 201,
    errors: [409],
    response: template,
    handler: async ({ principal, body, ip }) => present(await createTemplate(ctx, principal.tenant.id, actorOf(principal, ip), body)),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/templates/:id',
    auth: 'any',
    scope: 'templates:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a template',
    description: 'The template with its subject and bodies as stored (Liquid source, not rendered).',
    params: templateId,
    errors: [404],
    response: template,
    handler: async ({ principal, params }) => present(await getTemplate(ctx.sql, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/templates/:id',
    auth: 'any',
    scope: 'templates:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Update a template',
    description:
      `Changes only the fields given; changed parts are parsed again before anything is stored. A null or empty body removes it, ` +
      `but one body must remain (422). ${LIQUID_NOTE} Renaming to a name the account already uses is 409.`,
    params: templateId,
    body: z.strictObject({ name: name.optional(), subject: subject.optional(), body_html: bodyHtml.optional(), body_text: bodyText.optional() }),
    errors: [404, 409],
    response: template,
    handler: async ({ principal, params, body, ip }) => present(await changeTemplate(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body)),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/templates/:id',
    auth: 'any',
    scope: 'templates:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete a template',
    description: 'Deletes the template; its name may be used again.',
    params: templateId,
    errors: [404],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params, ip }) => {
      await removeTemplate(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { deleted: true, id: params.id };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/templates/:id/render',
    auth: 'any',
    scope: 'templates:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Render a template',
    description:
      'Renders the stored template for a sample recipient, exactly as a send would: variables are top-level names, and contact ' +
      '(with its custom_fields, also reachable as custom_fields.<key>) is reserved for the recipient. Missing variables render empty. ' +
      'HTML output is escaped in the HTML body only; the subject is kept on one line. A render that fails or runs past its time or ' +
      'memory limit, or past the render budget of a request (config/render.yaml request_budget_ms), is 422 naming the part and the limit. ' +
      "Renders run on render threads shared fairly between tenants: with too many of the tenant's renders already waiting, 429 rate_limited with " +
      'Retry-After. Nothing is stored or sent.',
    params: templateId,
    body: z.strictObject({
      variables: z.record(z.string(), z.unknown()).optional().describe('Values for {{ name }} outputs'),
      contact: contact.optional().describe('The sample recipient'),
    }),
    errors: [404, 429],
    response: rendered,
    handler: async ({ principal, params, body }) =>
      renderStored(ctx.sql, { renderer: ctx.renderer, budgetMs: ctx.config.render.request_budget_ms }, principal.tenant.id, params.id, body),
  });
};
