// GET /events: the tenant's event feed (send, delivered, deferred, bounce, dropped; later opens, clicks, complaints).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { EVENT_TYPES, type EventRow } from '../../shared/engagement/events/event.js';
import { listEventPage } from '../../shared/engagement/events/service.js';
import { defineRoute } from '../route.js';
import { cursorPagination, iso, timestamp } from '../schemas/common.js';

export const event = z.object({
  id: z.string(),
  type: z.enum(EVENT_TYPES),
  subtype: z.string().nullable().describe('bounce: hard (the address is suppressed) or soft'),
  message_id: z.string().nullable().describe("The send's id (as POST /transactional/send answered)"),
  rfc_message_id: z.string().nullable().describe('The Message-ID header of the message'),
  recipient: z.string(),
  detail: z.record(z.string(), z.unknown()).describe('What happened: remote reply, deferral time and reason, drop reason'),
  occurred_at: timestamp,
});

export const presentEvent = (e: EventRow): z.input<typeof event> => ({
  id: e.id,
  type: e.type,
  subtype: e.subtype,
  message_id: e.send_id,
  rfc_message_id: e.message_id,
  recipient: e.recipient,
  detail: e.detail,
  occurred_at: iso(e.occurred_at),
});

export const eventRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/events',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: ['Events'],
    summary: 'List events',
    description:
      "Every message's events, newest first: send (accepted), deferred (warm-up cap or a temporary failure), delivered, bounce " +
      '(subtype hard or soft), dropped (suppressed recipient). Filter by type, since, message_id (the send id, or the Message-ID header) ' +
      'and recipient. Cursor pagination: pass next_cursor as ?after=.',
    query: cursorPagination.extend({
      type: z.enum(EVENT_TYPES).optional(),
      since: timestamp.optional().describe('Only events at or after this time'),
      message_id: z.string().max(998).optional(),
      recipient: z.string().max(254).optional().describe('Only events of this recipient address'),
    }),
    list: true,
    response: event,
    handler: async ({ principal, query }) => {
      const page = await listEventPage(ctx.sql, principal.tenant.id, { ...query, since: query.since ? new Date(query.since) : undefined });
      return { ...page, items: page.items.map(presentEvent) };
    },
  });
};
