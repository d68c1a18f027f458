// The tenant's audit: the recent campaign audit feed, the CSV export (streamed) and the PDF export (digest in every footer).
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AUDIT_COLUMNS, auditCsv, CSV_DEFAULT_DAYS, csvWindow, PDF_MAX_ROWS, pdfRows, pdfWindow } from '../../shared/operations/audit/export.js';
import type { AuditRow } from '../../shared/operations/audit/log.js';
import { renderAuditPdf } from '../../shared/operations/audit/pdf.js';
import { listAuditEvents, recentCampaignAudit } from '../../shared/operations/audit/activity.js';
import type { AuditSelection } from '../../shared/operations/audit/queries.js';
import { defineRoute } from '../route.js';
import { calendarDate, iso } from '../schemas/common.js';
import { errorEnvelope, overLimitError } from '../schemas/envelope.js';

const TAGS = ['Audit'];

export const auditEntry = z.object({
  id: z.string(),
  time: z.string().describe('RFC 3339 UTC, millisecond precision'),
  action: z.string().describe('Event name, e.g. campaign.created (docs/audit.md)'),
  actor_type: z.enum(['user', 'api_key', 'system']),
  actor_id: z.string().nullable(),
  resource_type: z.string().nullable(),
  resource_id: z.string().nullable(),
  ip: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  chain_seq: z.string().nullable().describe('Position in the hash chain; null for a moment after commit, until the appender chains the row'),
  hash: z.string().nullable().describe('SHA-256 of the row and its predecessor in the chain'),
});

export const entryOf = (r: AuditRow): z.input<typeof auditEntry> => ({
  id: r.id,
  time: iso(r.created_at),
  action: r.action,
  actor_type: r.actor_type,
  actor_id: r.actor_id,
  resource_type: r.resource_type,
  resource_id: r.resource_id,
  ip: r.ip,
  metadata: r.metadata,
  chain_seq: r.chain_seq,
  hash: r.hash,
});

export const auditRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/audit',
    auth: 'any',
    // Actor ids and caller addresses: audit data. The spec names no audit:read, and audit:export is its one audit scope.
    scope: 'audit:export',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Recent campaign audit log',
    description:
      "The tenant's campaign audit rows (campaign.created, campaign.updated, campaign.send_started, campaign.ab_finalized, …), newest first, with " +
      'limit and offset echoed.',
    query: z.object({
      limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size, 1..200'),
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
    }),
    response: z.object({ data: z.array(auditEntry), limit: z.number().int(), offset: z.number().int() }),
    handler: async ({ principal, query }) => {
      const rows = await recentCampaignAudit(ctx.sql, principal.tenant.id, query.limit, query.offset);
      return { data: rows.map(entryOf), limit: query.limit, offset: query.offset };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/audit-events',
    auth: 'any',
    scope: 'audit:export',
    // Every audit row of the tenant, as the CSV and PDF exports hold them: their rule (owner), not the campaign feed's.
    role: 'owner',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List audit events',
    description:
      'Every audit row of the tenant (not only campaign.*), newest first, ' +
      `from from to to (UTC dates, both inclusive; default the last ${CSV_DEFAULT_DAYS} days, ` +
      "the CSV export's window), optionally narrowed to an action prefix (api_key. or an exact name), an actor (a user or key id, or a user's e-mail) and a " +
      "resource (a resource type or id, matched exactly). Each row names its actor (actor_label: the user's e-mail or the key's name; null once deleted). " +
      "Pages go back with before= the previous page's next_before (null on the last page). " +
      "Not in the spec: the dashboard's audit page. Owner role only, like the exports that hold the same rows; " +
      'an API key needs audit:export and an owner as its maker.',
    query: z.object({
      from: calendarDate.optional().describe('First UTC day (YYYY-MM-DD)'),
      to: calendarDate.optional().describe('Last UTC day (YYYY-MM-DD), inclusive'),
      action_prefix: z.string().min(1).max(200).optional().describe('Event names starting with this, e.g. api_key.'),
      actor: z.string().min(1).max(254).optional().describe("A user's or API key's id, or a user's e-mail"),
      resource: z.string().min(1).max(200).optional().describe('A resource type or a resource id, matched exactly'),
      before: z
        .string()
        .regex(/^[0-9]{1,19}$/)
        .optional()
        .describe("Rows older than this id: the previous page's next_before"),
      limit: z.coerce.number().int().min(1).max(200).default(50).describe('Page size, 1..200'),
    }),
    errors: [403, 422],
    response: z.object({
      items: z.array(auditEntry.omit({ time: true }).extend({ time: z.string(), actor_label: z.string().nullable() })),
      next_before: z.string().nullable().describe('Pass as before for the next (older) page; null when this is the last'),
    }),
    handler: async ({ principal, query }) => {
      const window = csvWindow(ctx.clock, query.from, query.to);
      const rows = await listAuditEvents(ctx.sql, {
        tenantId: principal.tenant.id,
        ...window,
        actionPrefix: query.action_prefix,
        actor: query.actor,
        resource: query.resource,
        before: query.before,
        limit: query.limit,
      });
      const page = rows.slice(0, query.limit);
      return {
        items: page.map((r) => ({
          id: r.id,
          time: iso(r.at),
          action: r.event,
          actor_type: r.actor.type,
          actor_id: r.actor.id,
          actor_label: r.actor.label,
          resource_type: r.resource_type,
          resource_id: r.resource_id,
          ip: r.actor.ip,
          metadata: r.metadata,
          chain_seq: r.chain_seq,
          hash: r.hash,
        })),
        next_before: rows.length > query.limit ? page.at(-1)!.id : null,
      };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/audit-events.csv',
    auth: 'any',
    scope: 'audit:export',
    // The same rows as the owner-only PDF (its digest is recomputed from them): the same rule.
    role: 'owner',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Export the audit log as CSV',
    description:
      `Every audit row of the tenant from from to to (UTC dates, both inclusive; default the last ${CSV_DEFAULT_DAYS} days), oldest first, ` +
      `streamed from a database cursor (any size, constant memory). Columns: ${AUDIT_COLUMNS.join(', ')}; metadata is canonical JSON (keys sorted), ` +
      `hash is the row's chain hash (empty for a moment after commit). A cell starting with = + - @ (or a tab or carriage return) is prefixed with ` +
      `' so spreadsheets keep it as text. ` +
      `The lines after the header, hashed with SHA-256, give the digest a PDF export of the same rows prints (docs/audit.md). ` +
      `Owner role only, like the PDF; an API key needs audit:export and an owner as its maker.`,
    query: z.object({
      from: calendarDate.optional().describe('First UTC day (YYYY-MM-DD)'),
      to: calendarDate.optional().describe('Last UTC day (YYYY-MM-DD), inclusive'),
    }),
    errors: [403, 422],
    produces: 'text/csv; charset=utf-8',
    response: z.string().describe(AUDIT_COLUMNS.join(',')),
    handler: async ({ principal, query, reply }) => {
      const window = csvWindow(ctx.clock, query.from, query.to);
      // Within the export deadline and a tenant slot; the header line and first page are read before answering.
      const lines = await ctx.queries.stream(principal.tenant.id, 'export', (tx) => auditCsv(tx, { tenantId: principal.tenant.id, ...window }), {
        prefetch: 2,
      });
      reply.header('content-disposition', `attachment; filename="audit-events-${principal.tenant.slug}.csv"`);
      return Readable.from(lines);
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/audit-events/export.pdf',
    auth: 'any',
    scope: 'audit:export',
    role: 'owner',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Export audit rows as a PDF with a digest',
    description:
      `The tenant's audit rows in [since, until) (default: the last ${CSV_DEFAULT_DAYS} days), optionally one action, an action prefix (e.g. campaign.), ` +
      `a resource type and id, oldest first, each printed as its CSV line in an embedded Unicode font. Every page footer carries the SHA-256 digest ` +
      `over the rows' CSV lines concatenated (the same lines GET /audit-events.csv streams), so the PDF can be checked against the CSV or the database. ` +
      `At most ${PDF_MAX_ROWS} rows (or limit, when smaller): a selection with more is refused with 400 {error, limit, row_count}, never truncated. ` +
      `Owner role only; an API key needs audit:export and an owner as its maker (a key's role is its maker's).`,
    query: z.object({
      since: z.iso.datetime({ offset: true }).optional().describe('RFC 3339 start (inclusive)'),
      until: z.iso.datetime({ offset: true }).optional().describe('RFC 3339 end (exclusive); default now'),
      action: z.string().max(200).optional().describe('Exact event name'),
      action_prefix: z.string().max(200).optional().describe('Event names starting with this, e.g. campaign.'),
      resource_type: z.string().max(200).optional(),
      resource_id: z.string().max(200).optional(),
      limit: z.coerce.number().int().min(1).max(PDF_MAX_ROWS).default(PDF_MAX_ROWS).describe(`Most rows accepted, 1..${PDF_MAX_ROWS}`),
    }),
    errors: [400, 403, 422],
    // A 400 is the oversized selection (its bound and count) or a malformed request (the plain envelope).
    errorBodies: { 400: z.union([overLimitError, errorEnvelope]) },
    produces: 'application/pdf',
    response: z.string().describe('PDF document'),
    handler: async ({ principal, query, reply }) => {
      const now = ctx.clock.now();
      const { since, until } = pdfWindow(ctx.clock, query.since, query.until);
      const selection: AuditSelection = {
        tenantId: principal.tenant.id,
        since,
        until,
        action: query.action,
        actionPrefix: query.action_prefix,
        resourceType: query.resource_type,
        resourceId: query.resource_id,
      };
      const rows = await pdfRows(ctx.queries, selection, query.limit);
      const shown: Record<string, string> = { since: since.toISOString(), until: until.toISOString() };
      for (const k of ['action', 'action_prefix', 'resource_type', 'resource_id'] as const) if (query[k] !== undefined) shown[k] = query[k]!;
      reply.header('content-disposition', `attachment; filename="audit-events-${principal.tenant.slug}.pdf"`);
      return renderAuditPdf(rows, { tenant: principal.tenant.slug, generatedAt: now, selection: shown });
    },
  });
};
