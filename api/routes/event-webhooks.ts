// Outbound event webhooks of the caller's tenant: endpoints (CRUD, secret rotation, test), each endpoint's delivery log, the dead letters and their replay.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { listDeadLetters, listDeliveryLog, replayDeadLetter } from '../../shared/webhooks/events/deliveries.js';
import { WEBHOOK_EVENT_TYPES } from '../../shared/webhooks/events/event-types.js';
import type { DeliveryRow } from '../../shared/webhooks/events/queries.js';
import {
  changeEndpoint,
  createEndpoint,
  getEndpoint,
  listEndpointPage,
  MAX_DESCRIPTION_LENGTH,
  MAX_ENDPOINTS_PER_TENANT,
  removeEndpoint,
  rotateSecret,
  type EndpointView,
} from '../../shared/webhooks/events/service.js';
import { testEndpoint } from '../../shared/webhooks/events/tester.js';
import { MAX_URL_LENGTH } from '../../shared/webhooks/inbound/url-policy.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Event webhooks'];

/**
 * Changing an endpoint decides where the tenant's events go and reveals a signing secret, and the spec's scope
 * list has no webhook scope: like the inbound webhook, writes take a user session or an unrestricted API key
 * (scope 'unrestricted', checked by the guard before the body is read). Reads show event data: events:read.
 */

const eventType = z.enum(WEBHOOK_EVENT_TYPES);

const endpoint = z.object({
  id: z.string(),
  url: z.string().describe('Where events are POSTed (https, public address)'),
  description: z.string().nullable(),
  event_types: z.array(eventType).describe('The event types POSTed to this endpoint'),
  enabled: z.boolean().describe('Off: no new events are queued for it, and queued ones are dead-lettered when due'),
  secret: z.string().nullable().describe('The signing secret (whsec_…) in clear: only in the answer that created or rotated it, null otherwise'),
  secret_revealed_once: z.boolean().describe('True only in the answer carrying the secret: it is never shown again'),
  secret_rotated_at: timestamp.nullable(),
  previous_secret_expires_at: timestamp.nullable().describe('After a rotation: until when the previous secret also signs each POST; null otherwise'),
  created_at: timestamp,
  updated_at: timestamp,
});

const present = (v: EndpointView): z.input<typeof endpoint> => ({
  ...v,
  secret_rotated_at: iso(v.secret_rotated_at),
  previous_secret_expires_at: iso(v.previous_secret_expires_at),
  created_at: iso(v.created_at),
  updated_at: iso(v.updated_at),
});

const deliveryStatus = z.enum(['pending', 'delivered', 'dead']);

const delivery = z.object({
  id: z.string().describe('The delivery: sent as webhook-id, the same on every attempt and replay'),
  webhook_id: z.string(),
  event_id: z.string(),
  event_type: eventType,
  status: deliveryStatus.describe('pending (queued or between attempts), delivered (a 2xx), dead (dead letter)'),
  attempts: z.number().int().describe('POSTs made so far (since the last replay)'),
  response_code: z.number().int().nullable().describe("The receiver's HTTP status on the last attempt; null when it never answered"),
  duration_ms: z.number().int().nullable().describe('Round trip of the last attempt'),
  last_error: z.string().nullable(),
  next_attempt_at: timestamp.nullable().describe('pending: when the next attempt is due'),
  created_at: timestamp,
  last_attempt_at: timestamp.nullable(),
  delivered_at: timestamp.nullable(),
  dead_at: timestamp.nullable(),
  payload: z.record(z.string(), z.unknown()).describe('The JSON body POSTed: { type, timestamp, data }'),
});

const presentDelivery = (d: DeliveryRow): z.input<typeof delivery> => ({
  id: d.id,
  webhook_id: d.webhook_id,
  event_id: d.event_id,
  event_type: d.event_type,
  status: d.status,
  attempts: d.attempts,
  response_code: d.last_status,
  duration_ms: d.last_duration_ms,
  last_error: d.last_error,
  next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
  created_at: iso(d.created_at),
  last_attempt_at: iso(d.last_attempt_at),
  delivered_at: iso(d.delivered_at),
  dead_at: iso(d.dead_at),
  payload: d.payload,
});

const url = z.string().max(MAX_URL_LENGTH).describe('https URL with a host resolving only to public addresses (checked again before every POST)');
const description = z.string().max(10_000).nullable().describe(`At most ${MAX_DESCRIPTION_LENGTH} characters once trimmed; null or blank: none`);
const eventTypes = z
  .array(eventType)
  .max(WEBHOOK_EVENT_TYPES.length * 2)
  .describe(`At least one of ${WEBHOOK_EVENT_TYPES.join(', ')}`);
const webhookId = idParam('id');

export const eventWebhookRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'GET',
    url: '/webhooks',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List event webhooks',
    description: "The tenant's event webhook endpoints, newest first, without secrets. Cursor pagination: pass next_cursor as ?after=.",
    query: cursorPagination,
    list: true,
    response: endpoint,
    handler: async ({ principal, query }) => {
      const page = await listEndpointPage(ctx, principal.tenant.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/webhooks',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Create an event webhook',
    description:
      'Every event of the types named is POSTed to url as JSON, signed by the Standard Webhooks scheme (see docs/inbound.md, "Event webhooks"). ' +
      'The answer carries the signing secret (whsec_…) once; store it. url must be https and resolve only to public addresses (else 422 naming url). ' +
      `At most ${MAX_ENDPOINTS_PER_TENANT} endpoints per account (409).`,
    body: z.strictObject({ url, event_types: eventTypes, description: description.optional(), enabled: z.boolean().optional().describe('Default true') }),
    status: 201,
    errors: [409, 422],
    response: endpoint,
    handler: async ({ principal, body, ip }) => {
      return present(await createEndpoint(ctx, principal.tenant.id, actorOf(principal, ip), body));
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/webhooks/dead-letters',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List dead-lettered event deliveries',
    description:
      'Deliveries of every endpoint of the tenant that were given up: a 4xx other than 429, the last of the attempts failing, or the endpoint disabled. ' +
      'Most recently dead first; cursor pagination. Replay one with POST /webhooks/dead-letters/{id}/replay.',
    query: cursorPagination,
    list: true,
    response: delivery,
    handler: async ({ principal, query }) => {
      const page = await listDeadLetters(ctx, principal.tenant.id, query);
      return { ...page, items: page.items.map(presentDelivery) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/webhooks/dead-letters/:id/replay',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Replay a dead-lettered delivery',
    description:
      'Puts the delivery back in the queue with a fresh schedule of attempts, due at once; it keeps its id, so the receiver sees the same webhook-id. ' +
      '404 unless it is a dead letter of the tenant.',
    params: idParam('id'),
    errors: [404],
    response: delivery,
    handler: async ({ principal, params, ip }) => {
      return presentDelivery(await replayDeadLetter(ctx, principal.tenant.id, actorOf(principal, ip), params.id));
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/webhooks/:id',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read an event webhook',
    description: "The endpoint without its secret. 404 for another tenant's endpoint.",
    params: webhookId,
    errors: [404],
    response: endpoint,
    handler: async ({ principal, params }) => present(await getEndpoint(ctx, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/webhooks/:id',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Change an event webhook',
    description: 'Changes the fields given. Queued deliveries keep their body and go to the URL as it is when attempted.',
    params: webhookId,
    body: z.strictObject({ url: url.optional(), event_types: eventTypes.optional(), description: description.optional(), enabled: z.boolean().optional() }),
    errors: [404, 422],
    response: endpoint,
    handler: async ({ principal, params, body, ip }) => {
      return present(await changeEndpoint(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body));
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/webhooks/:id',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete an event webhook',
    description: 'Deletes the endpoint with its delivery log, queued deliveries and dead letters.',
    params: webhookId,
    errors: [404],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params, ip }) => {
      await removeEndpoint(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { deleted: true, id: params.id };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/webhooks/:id/rotate-secret',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Rotate the signing secret',
    description:
      'Makes a new secret, in this answer only. For 24 hours (previous_secret_expires_at) every POST carries two signatures in webhook-signature, ' +
      'one per secret, so the receiver can switch to the new secret without a gap.',
    params: webhookId,
    errors: [404],
    response: endpoint,
    handler: async ({ principal, params, ip }) => {
      return present(await rotateSecret(ctx, principal.tenant.id, actorOf(principal, ip), params.id));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/webhooks/:id/test',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Send a test event',
    description:
      'POSTs one event of type "test", signed like real events, once, enabled or not; not retried and not in the delivery log. ' +
      'Reports whether a real delivery would have counted as delivered (2xx within the timeout), the HTTP status (null without an answer), the round ' +
      'trip and the error.',
    params: webhookId,
    errors: [404],
    response: z.object({
      delivered: z.boolean(),
      webhook_id: z.string().describe('The webhook-id header the test carried'),
      http_status: z.number().int().nullable(),
      duration_ms: z.number().int(),
      error: z.string().nullable(),
    }),
    handler: async ({ principal, params }) => {
      return testEndpoint(ctx, principal.tenant.id, params.id);
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/webhooks/:id/deliveries',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Delivery log of an event webhook',
    description:
      'One row per event queued for the endpoint, newest first: status, attempts, the last response code and duration, the last error, the body. ' +
      "Filter with ?status=. 404 for another tenant's endpoint.",
    params: webhookId,
    query: cursorPagination.extend({ status: deliveryStatus.optional() }),
    list: true,
    errors: [404],
    response: delivery,
    handler: async ({ principal, params, query }) => {
      const page = await listDeliveryLog(ctx, principal.tenant.id, params.id, query);
      return { ...page, items: page.items.map(presentDelivery) };
    },
  });
};
