// The inbound message API: list and search a mailbox, read a message parsed or raw (message/rfc822), mark it read or unread, delete it.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { MessageListRow } from '../../shared/inbound/workspace-mailboxes/message-queries.js';
import { getMessage, getRawMessage, listMessagePage, markMessage, messageScopeOf, removeMessage } from '../../shared/inbound/workspace-mailboxes/messages.js';
import { PARSE_MAX_BYTES } from '../../shared/inbound/workspace-mailboxes/parse.js';
import { defineRoute, operationIdOf, type ApiInstance } from '../route.js';
import { cursorPagination, idParam, iso, queryFlag, timestamp } from '../schemas/common.js';
import { errorEnvelope } from '../schemas/envelope.js';

const TAGS = ['Inbound'];

const ACCESS =
  '\n\nCallers: a mailbox session (from POST /auth/mail/invite/consume) sees only its own mailbox; a user session or an API key ' +
  'without scopes (all access) sees every mailbox of its tenant (a scoped key gets 403 invalid_scope: no scope covers mail). ' +
  'A message of another mailbox or tenant is 404.';

const item = z.object({
  id: z.string(),
  mailbox_id: z.string(),
  from: z.string().nullable().describe('The From header as received (untrusted: inbound mail is not authenticated by Mailpath)'),
  subject: z.string().nullable(),
  received_at: timestamp,
  seen: z.boolean(),
  size_bytes: z.number().int().describe("Size of the stored message, Mailpath's trace headers included"),
});

const presentItem = (m: MessageListRow): z.output<typeof item> => ({
  id: m.id,
  mailbox_id: m.mailbox_id,
  from: m.header_from,
  subject: m.subject,
  received_at: iso(m.received_at),
  seen: m.seen,
  size_bytes: m.size_bytes,
});

const address = z.object({ name: z.string().nullable(), address: z.string().nullable() });

const detail = item.omit({ from: true }).extend({
  envelope: z.object({
    mail_from: z.string().describe('SMTP MAIL FROM; empty for a null sender'),
    rcpt_to: z.string().describe('The envelope recipient: this mailbox'),
  }),
  headers: z
    .array(z.object({ name: z.string(), value: z.string() }))
    .describe('Every header field in order, unfolded, values as sent (encoded-words not decoded)'),
  from: z.array(address).describe('The From header, parsed (untrusted)'),
  to: z.array(address),
  cc: z.array(address),
  reply_to: z.array(address),
  date: z.string().nullable().describe('The Date header as RFC 3339, null when absent or unreadable'),
  message_id: z.string().nullable(),
  in_reply_to: z.string().nullable(),
  references: z.array(z.string()),
  text: z.string().nullable().describe('The text/plain body; null when there is none (HTML is not converted)'),
  html: z.string().nullable().describe('The text/html body as sent (cid: links kept; sanitize before rendering)'),
  attachments: z
    .array(
      z.object({
        filename: z.string().nullable(),
        content_type: z.string(),
        size: z.number().int(),
        content_id: z.string().nullable().describe('Content-ID without angle brackets, for cid: links'),
        disposition: z.string().nullable(),
      }),
    )
    .describe('Metadata only; fetch the raw message for the content'),
  authentication_results: z
    .array(z.string())
    .describe("Authentication-Results values, top first: the first is Mailpath's own, any below came with the message"),
  body_parsed: z.boolean().describe(`False for messages over ${PARSE_MAX_BYTES} bytes: only the headers were read; use the raw download`),
});

const messageId = idParam('id');

/** The raw download bypasses the JSON envelope; its errors still use it. */
function rawRoute(app: ApiInstance): void {
  const { ctx } = app;
  const errorDoc = (text: string) => errorEnvelope.describe(text);
  app.route({
    method: 'GET',
    url: '/mail/messages/:id/raw',
    config: { auth: 'any_or_mailbox', scope: 'unrestricted', rateLimit: 'read' },
    schema: {
      operationId: operationIdOf('GET', '/mail/messages/:id/raw'),
      tags: TAGS,
      summary: 'Download a message as received',
      description:
        "The stored message byte for byte as `message/rfc822` (not JSON): the sender's message with Mailpath's Received and " +
        'Authentication-Results headers on top. Errors are JSON envelopes as elsewhere.' +
        ACCESS,
      security: [{ bearerJwt: [] }, { apiKey: [] }],
      params: messageId,
      response: {
        200: { description: 'The raw message', content: { 'message/rfc822': { schema: z.string().meta({ format: 'binary' }) } } },
        400: errorDoc('A bad parameter (bad_request)'),
        401: errorDoc('Missing, unparseable, revoked or expired credential (unauthenticated)'),
        403: errorDoc('A scoped API key (invalid_scope)'),
        404: errorDoc('No such message in a mailbox the caller may read (not_found)'),
        422: errorDoc('A parameter is invalid (validation_error)'),
        429: errorDoc('Rate limited; retry after Retry-After seconds (rate_limited)'),
        500: errorDoc('Server failure (internal)'),
      },
    },
    handler: async (request, reply) => {
      const raw = await getRawMessage(ctx, messageScopeOf(request.principal!), request.params.id);
      return (
        reply
          .header('content-type', 'message/rfc822')
          .header('content-disposition', `attachment; filename="${request.params.id}.eml"`)
          .header('x-content-type-options', 'nosniff')
          // A Buffer skips the serializer; the schema's binary string only documents it.
          .send(raw as unknown as string)
      );
    },
  });
}

export const mailMessageRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/mail/messages',
    auth: 'any_or_mailbox',
    scope: 'unrestricted',
    rateLimit: 'read',
    tags: TAGS,
    summary: "List a mailbox's messages",
    description:
      'Messages of one mailbox, newest first. mailbox_id is required with a user session or API key; a mailbox session may leave it out ' +
      '(naming another mailbox is 404). q searches the From header and the subject (case-insensitive text they contain); unread=true ' +
      'lists only unseen messages, unread=false only seen ones. total counts the matches. Cursor pagination: pass next_cursor as ?after=.' +
      ACCESS,
    query: cursorPagination.extend({
      mailbox_id: z.string().max(64).optional().describe('The mailbox; optional for a mailbox session'),
      q: z.string().max(200).optional().describe('Text the From header or subject contains (case-insensitive)'),
      unread: queryFlag.optional().describe('true: only unseen; false: only seen'),
    }),
    errors: [404],
    list: true,
    response: item,
    handler: async ({ principal, query }) => {
      const page = await listMessagePage(ctx, messageScopeOf(principal), query);
      return { ...page, items: page.items.map(presentItem) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/mail/messages/:id',
    auth: 'any_or_mailbox',
    scope: 'unrestricted',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a message',
    description:
      'One message, parsed: the header fields (all, and the common ones decoded), addresses, bodies, attachment metadata and the ' +
      'Authentication-Results. Reading does not mark it seen (PATCH does). Inbound mail is untrusted: Mailpath does not enforce SPF, DKIM ' +
      `or DMARC on it. Messages over ${PARSE_MAX_BYTES} bytes are read for their headers only (body_parsed false).` +
      ACCESS,
    params: messageId,
    errors: [404],
    response: detail,
    handler: async ({ principal, params }) => {
      const { row, parsed } = await getMessage(ctx, messageScopeOf(principal), params.id);
      const { from: _header, ...summary } = presentItem(row);
      return { ...summary, ...parsed, subject: parsed.subject ?? row.subject, envelope: { mail_from: row.mail_from, rcpt_to: row.recipient } };
    },
  });

  rawRoute(app);

  defineRoute(app, {
    method: 'PATCH',
    url: '/mail/messages/:id',
    auth: 'any_or_mailbox',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Mark a message read or unread',
    description: `Sets seen: true marks the message read, false unread.${ACCESS}`,
    params: messageId,
    body: z.strictObject({ seen: z.boolean() }),
    errors: [404],
    response: item,
    handler: async ({ principal, params, body }) => presentItem(await markMessage(ctx, messageScopeOf(principal), params.id, body.seen)),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/mail/messages/:id',
    auth: 'any_or_mailbox',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete a message',
    description: `Removes the message from its mailbox.${ACCESS}`,
    params: messageId,
    errors: [404],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params }) => {
      await removeMessage(ctx, messageScopeOf(principal), params.id);
      return { deleted: true, id: params.id };
    },
  });
};
