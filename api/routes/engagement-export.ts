// A campaign's engagement events as a CSV download, streamed from a database cursor.
import { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { requireCampaign } from '../../shared/campaigns/service.js';
import { COLUMNS, engagementCsv, exportWindow, MAX_WINDOW_DAYS } from '../../shared/campaigns/engagement-export/csv.js';
import { defineRoute } from '../route.js';
import { idParam } from '../schemas/common.js';

export const engagementExportRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/campaigns/:id/engagement.csv',
    auth: 'any',
    scope: ['campaigns:read', 'audit:export'],
    rateLimit: 'read',
    tags: ['Campaigns'],
    summary: "Export a campaign's engagement events as CSV",
    description:
      `Every event of the campaign (send, delivered, deferred, bounce, dropped, open, click, complaint, unsubscribe) from since to now, oldest first, ` +
      `streamed as it is read (any size, constant memory). Columns: ${COLUMNS.join(', ')}. sequence_step is empty (campaigns are single messages); ` +
      `ip_truncated is the client address cut to /24 (IPv4) or /48 (IPv6); bounce_subtype is hard or soft on bounces. ` +
      `since defaults to ${MAX_WINDOW_DAYS} days ago; an earlier since is 422 (the window is capped at ${MAX_WINDOW_DAYS} days). ` +
      `A cell starting with = + - @ (or a tab or carriage return) is prefixed with ' so spreadsheets keep it as text. ` +
      `API keys need both campaigns:read and audit:export.`,
    params: idParam('id'),
    query: z.object({ since: z.iso.datetime({ offset: true }).optional().describe('RFC 3339 start of the window (inclusive)') }),
    errors: [403, 404, 422],
    produces: 'text/csv; charset=utf-8',
    response: z.string().describe(COLUMNS.join(',')),
    handler: async ({ principal, params, query, reply }) => {
      const campaign = await requireCampaign(ctx.sql, principal.tenant.id, params.id);
      const window = exportWindow(ctx.clock, query.since === undefined ? undefined : new Date(query.since));
      // The cursor reads within the export deadline, holding one of the tenant's heavy-query slots until the download ends;
      // the header line and first page are read before answering, so a refusal or a deadline there is its own status.
      const lines = await ctx.queries.stream(principal.tenant.id, 'export', (tx) => engagementCsv(tx, principal.tenant.id, campaign.id, window), {
        prefetch: 2,
      });
      reply.header('content-disposition', `attachment; filename="campaign-${campaign.id}-engagement.csv"`);
      return Readable.from(lines);
    },
  });
};
