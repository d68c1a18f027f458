// The outbound log: a tenant's sends (status, gate decisions, delivery attempts with remote replies) and each one's signed message, so every outcome is
// observable.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { EventRow } from '../../shared/engagement/events/queries.js';
import type { AttemptRow, SendRow } from '../../shared/sending/outbound-log/queries.js';
import { SEND_SOURCES } from '../../shared/sending/outbound-log/send-sources.js';
import { getSendDetail, getSendMessage, listSendPage } from '../../shared/sending/outbound-log/service.js';
import { defineRoute, operationIdOf, type ApiInstance } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';
import { errorEnvelope } from '../schemas/envelope.js';
import { event, presentEvent } from './events.js';

const TAGS = ['Sends'];

const STATUSES = ['queued', 'deferred', 'dropped', 'simulated', 'sending', 'delivered', 'bounced', 'failed'] as const;

const send = z.object({
  id: z.string().describe('The message_id POST /transactional/send answered with'),
  message_id: z.string().describe('The RFC 5322 Message-ID header (without angle brackets)'),
  source: z.enum(SEND_SOURCES).describe("proof: a campaign's proof (POST /campaigns/{id}/proof), outside its stats"),
  mode: z.enum(['live', 'test']).describe('test: sent with a test key, never delivered'),
  status: z
    .enum(STATUSES)
    .describe(
      'queued → sending → delivered or bounced; deferred (warm-up cap or a temporary failure, retried at defer_until); dropped (suppressed); simulated ' +
        '(test key or sandbox)',
    ),
  envelope: z.object({
    mail_from: z.string().describe('The VERP envelope sender: bounces come back to it and map to this send'),
    rcpt_to: z.string(),
  }),
  from_email: z.string(),
  to: z.string(),
  subject: z.string(),
  campaign_id: z.string().nullable().describe('The campaign this send is part of; null for transactional and SMTP sends'),
  size_bytes: z.number().int().nullable().describe('The signed message; null when nothing was built (dropped)'),
  defer_until: timestamp.nullable(),
  status_detail: z.string().nullable().describe('Why it ended so: drop reason, deferral, last remote reply of a bounce'),
  created_at: timestamp,
  updated_at: timestamp,
});

const attempt = z.object({
  attempted_at: timestamp,
  remote_host: z.string().nullable().describe('The MX host or relay talked to'),
  outcome: z.enum(['delivered', 'deferred', 'bounced']),
  smtp_code: z.number().int().nullable(),
  enhanced_code: z.string().nullable(),
  reply: z.string().nullable().describe("The remote server's reply"),
  duration_ms: z.number().int(),
});

const sendDetail = send.extend({
  gate_decisions: z.array(z.record(z.string(), z.unknown())).describe('Each gate that ran, in order, with its outcome'),
  attempts: z.array(attempt).describe('Delivery attempts, oldest first'),
  events: z.array(event).describe("The send's events, oldest first"),
});

const present = (s: SendRow): z.input<typeof send> => ({
  id: s.id,
  message_id: s.message_id,
  source: s.source,
  mode: s.mode,
  status: s.status,
  envelope: { mail_from: s.envelope_from, rcpt_to: s.to_email },
  from_email: s.from_email,
  to: s.to_email,
  subject: s.subject,
  campaign_id: s.campaign_id,
  size_bytes: s.size_bytes,
  defer_until: iso(s.defer_until),
  status_detail: s.status_detail,
  created_at: iso(s.created_at),
  updated_at: iso(s.updated_at),
});

const presentAttempt = (a: AttemptRow): z.input<typeof attempt> => ({
  attempted_at: iso(a.attempted_at),
  remote_host: a.remote_host,
  outcome: a.outcome,
  smtp_code: a.smtp_code,
  enhanced_code: a.enhanced_code,
  reply: a.reply,
  duration_ms: a.duration_ms,
});

/** The raw download bypasses the JSON envelope (as GET /mail/messages/{id}/raw does); its errors still use it. */
function rawRoute(app: ApiInstance): void {
  const { ctx } = app;
  const errorDoc = (text: string) => errorEnvelope.describe(text);
  app.route({
    method: 'GET',
    url: '/sends/:id/raw',
    config: { auth: 'any', scope: 'events:read', rateLimit: 'read' },
    schema: {
      operationId: operationIdOf('GET', '/sends/:id/raw'),
      tags: TAGS,
      summary: "Download a send's signed message",
      description:
        'The message exactly as it leaves (or, for a simulated send, would have left) Mailpath: composed, with its DKIM-Signature on top, ' +
        'as `message/rfc822` (not JSON). The same bytes are handed to the receiving server; the envelope is in GET /sends/{id}. ' +
        'A dropped send keeps no message (404). Errors are JSON envelopes as elsewhere.\n\nRequired scope for API keys: `events:read`.',
      security: [{ bearerJwt: [] }, { apiKey: [] }],
      params: idParam('id'),
      response: {
        200: { description: 'The signed message', content: { 'message/rfc822': { schema: z.string().meta({ format: 'binary' }) } } },
        400: errorDoc('A bad parameter (bad_request)'),
        401: errorDoc('Missing, unparseable, revoked or expired credential (unauthenticated)'),
        403: errorDoc('Credential lacks the events:read scope (invalid_scope)'),
        404: errorDoc('No such send of this tenant, or it keeps no message (dropped) (not_found)'),
        422: errorDoc('A parameter is invalid (validation_error)'),
        429: errorDoc('Rate limited; retry after Retry-After seconds (rate_limited)'),
        500: errorDoc('Server failure (internal)'),
      },
    },
    handler: async (request, reply) => {
      const message = await getSendMessage(ctx, request.principal!.tenant.id, request.params.id);
      return (
        reply
          .header('content-type', 'message/rfc822')
          .header('content-disposition', `attachment; filename="${request.params.id}.eml"`)
          .header('x-content-type-options', 'nosniff')
          // A Buffer skips the serializer; the schema's binary string only documents it.
          .send(message as unknown as string)
      );
    },
  });
}

export const sendRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/sends',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List sends',
    description:
      'The outbound log, newest first: every message accepted from the API or SMTP submission, including test-key and sandbox sends ' +
      '(simulated) and suppressed recipients (dropped). Filter by status, recipient and from (exact addresses, case-insensitive), ' +
      'campaign_id, the time accepted (since, until) and free text q; filters combine (all must match). ' +
      'Cursor pagination: pass next_cursor as ?after=.',
    query: cursorPagination.extend({
      status: z.enum(STATUSES).optional(),
      recipient: z.string().max(254).optional().describe('Only sends to this address'),
      from: z.string().max(254).optional().describe('Only sends from this From address'),
      campaign_id: z.uuid().optional().describe("Only this campaign's sends"),
      since: timestamp.optional().describe('Only sends accepted at or after this time'),
      until: timestamp.optional().describe('Only sends accepted before this time'),
      q: z.string().max(200).optional().describe('Free text: a case-insensitive substring of the subject, the recipient or the From address'),
    }),
    list: true,
    response: send,
    handler: async ({ principal, query }) => {
      const page = await listSendPage(ctx, principal.tenant.id, {
        limit: query.limit,
        after: query.after,
        status: query.status,
        recipient: query.recipient,
        from: query.from,
        campaignId: query.campaign_id,
        since: query.since ? new Date(query.since) : undefined,
        until: query.until ? new Date(query.until) : undefined,
        text: query.q,
      });
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/sends/:id',
    auth: 'any',
    scope: 'events:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a send',
    description: 'One send with its envelope, status, the decision of every gate, its delivery attempts with the remote replies, and its events.',
    params: idParam('id'),
    errors: [404],
    response: sendDetail,
    handler: async ({ principal, params }) => {
      const { send: row, attempts, events } = await getSendDetail(ctx, principal.tenant.id, params.id);
      return {
        ...present(row),
        gate_decisions: row.gate_decisions as Record<string, unknown>[],
        attempts: attempts.map(presentAttempt),
        events: events.map((e: EventRow) => presentEvent(e)),
      };
    },
  });

  rawRoute(app);
};
