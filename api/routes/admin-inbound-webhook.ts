// Super-admin view of a tenant's inbound-webhook dead letters: list them, and replay one.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { listDeadLetters, replayDeadLetter } from '../../shared/webhooks/inbound/dead-letters.js';
import type { DeadDeliveryRow } from '../../shared/webhooks/inbound/queries.js';
import { defineRoute } from '../route.js';
import { cursorPagination, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: tenants'];

const deadLetter = z.object({
  id: z.string().describe('The delivery id (sent to the receiver as X-MP-Inbound-Delivery)'),
  inbound_message_id: z.string(),
  recipient: z.string().describe('The envelope recipient'),
  attempts: z.number().int(),
  last_status: z.number().int().nullable().describe("The receiver's last HTTP status; null when it never answered"),
  last_error: z.string().nullable(),
  created_at: timestamp,
  last_attempt_at: timestamp.nullable(),
  dead_at: timestamp,
});

const present = (d: DeadDeliveryRow): z.input<typeof deadLetter> => ({
  id: d.id,
  inbound_message_id: d.inbound_message_id,
  recipient: d.recipient,
  attempts: d.attempts,
  last_status: d.last_status,
  last_error: d.last_error,
  created_at: iso(d.created_at),
  last_attempt_at: iso(d.last_attempt_at),
  dead_at: iso(d.dead_at),
});

const tenantParam = z.object({ id: z.string().max(64).describe('Tenant id') });

export const adminInboundWebhookRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/inbound-webhook-dlq',
    auth: 'super_admin',
    rateLimit: 'read',
    tags: TAGS,
    summary: "List a tenant's dead-lettered inbound webhook deliveries",
    description:
      'Deliveries that will not be retried: the receiver answered a 4xx other than 429, every attempt failed, or the webhook ' +
      'was switched off or removed while they waited. Most recently dead first; cursor pagination (?after=next_cursor). 404 for an unknown tenant.',
    params: tenantParam,
    query: cursorPagination,
    errors: [404],
    list: true,
    response: deadLetter,
    handler: async ({ params, query }) => {
      const page = await listDeadLetters(ctx, params.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/tenants/:id/inbound-webhook-dlq/:delivery_id/replay',
    auth: 'super_admin',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Replay a dead-lettered inbound webhook delivery',
    description:
      'Puts the delivery back to pending with its attempts reset and queues it at once: it is POSTed again with the current ' +
      'webhook settings and gets a full retry schedule. Audit-logged. 404 when the tenant is unknown or the delivery is not one of its dead letters.',
    params: z.object({ id: z.string().max(64).describe('Tenant id'), delivery_id: z.string().max(64).describe('Delivery id') }),
    errors: [404],
    response: z.object({ id: z.string(), status: z.literal('pending') }),
    handler: async ({ params, principal, ip }) => replayDeadLetter(ctx, params.id, params.delivery_id, actorOf(principal, ip)),
  });
};
