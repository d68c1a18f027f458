// The caller's tenant suppression list: list and search, read, add one or many, remove.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import type { SuppressionRow } from '../../shared/audiences/suppressions/queries.js';
import { ADDABLE_REASONS, SUPPRESSION_REASONS, SUPPRESSION_SOURCES } from '../../shared/audiences/suppressions/reasons.js';
import { addSuppression, addSuppressions, getSuppression, listSuppressionPage, removeSuppression } from '../../shared/audiences/suppressions/service.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Suppressions'];

/** Bulk adds beyond this are split by the caller: one call stays one short transaction. */
const BULK_MAX = 1000;

const reason = z
  .enum(SUPPRESSION_REASONS)
  .describe(
    'hard_bounce and complaint are added automatically by the mail pipeline; unsubscribe by unsubscribe links; manual and spam_trap by hand; ' +
      'erased by a contact erasure (the entry keeps only a hash of the address)',
  );

const addableReason = z
  .enum(ADDABLE_REASONS)
  .describe('hard_bounce and complaint are added automatically by the mail pipeline; unsubscribe by unsubscribe links; manual and spam_trap by hand');

const suppression = z.object({
  id: z.string(),
  email: z
    .string()
    .nullable()
    .describe('Trimmed and lower-cased, the domain in its ASCII (IDNA) form; null for an erased person (reason erased), whose address is kept only as a hash'),
  reason,
  source: z.enum(SUPPRESSION_SOURCES).describe('What added it: the API, bounce processing, a complaint report, an unsubscribe link or a contact erasure'),
  detail: z.string().nullable().describe('For automatic entries, e.g. the remote SMTP reply of a hard bounce'),
  message_id: z.string().nullable().describe('For automatic entries, the send that caused it'),
  created_at: timestamp,
});

const present = (s: SuppressionRow): z.input<typeof suppression> => ({
  id: s.id,
  email: s.email,
  reason: s.reason,
  source: s.source,
  detail: s.detail,
  message_id: s.message_id,
  created_at: iso(s.created_at),
});

const emailField = z.string().max(1000).describe('An address local@domain (at most 254 characters; no spaces or line breaks); stored lower-cased');

const bulkRow = z.object({
  input: z.string().describe('The address as sent'),
  email: z.string().nullable().describe('The stored form; null when invalid'),
  status: z.enum(['added', 'already_suppressed', 'invalid']),
  id: z.string().nullable().describe("The suppression's id (new or existing); null when invalid"),
  message: z.string().nullable().describe('Why the address is invalid; null otherwise'),
});

const suppressionId = idParam('id');

export const suppressionRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/suppressions',
    auth: 'any',
    scope: 'suppressions:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List suppressed addresses',
    description:
      "The tenant's suppression list, newest first. Mail to a suppressed address is dropped before it is sent. " +
      'Filter by reason, and search with q (case-insensitive text the address contains; a complete address also finds the erased entry ' +
      'of that address, listed with email null and reason erased). total counts the matches. ' +
      'Cursor pagination: pass next_cursor as ?after=.',
    query: cursorPagination.extend({
      reason: reason.optional().describe('Only entries with this reason'),
      q: z.string().max(254).optional().describe('Only addresses containing this text (case-insensitive)'),
    }),
    list: true,
    response: suppression,
    handler: async ({ principal, query }) => {
      const page = await listSuppressionPage(ctx, principal.tenant.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/suppressions/:id',
    auth: 'any',
    scope: 'suppressions:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a suppression',
    description: "One entry of the tenant's suppression list, with why and by what it was added.",
    params: suppressionId,
    errors: [404],
    response: suppression,
    handler: async ({ principal, params }) => present(await getSuppression(ctx, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/suppressions',
    auth: 'any',
    scope: 'suppressions:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Suppress an address',
    description:
      'Adds one address to the suppression list (reason manual unless given); mail to it is dropped from now on. ' +
      'The address is trimmed and lower-cased; one that is already suppressed is 409, an invalid one 422.',
    body: z.strictObject({ email: emailField, reason: addableReason.default('manual') }),
    status: 201,
    errors: [409],
    response: suppression,
    handler: async ({ principal, body, ip }) => present(await addSuppression(ctx, principal.tenant.id, actorOf(principal, ip), body)),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/suppressions/bulk',
    auth: 'any',
    scope: 'suppressions:write',
    rateLimit: 'bulk',
    tags: TAGS,
    summary: 'Suppress many addresses',
    description:
      `Adds up to ${BULK_MAX} addresses in one call (reason manual unless given). Answers 200 with one result per address, in order: ` +
      'added, already_suppressed (also a repeat within the call) or invalid with a message; and the totals of each. ' +
      'An invalid address never fails the others.',
    body: z.strictObject({
      emails: z.array(emailField).min(1).max(BULK_MAX).describe(`1..${BULK_MAX} addresses`),
      reason: addableReason.default('manual'),
    }),
    response: z.object({
      results: z.array(bulkRow),
      totals: z.object({ added: z.number().int(), already_suppressed: z.number().int(), invalid: z.number().int() }),
    }),
    handler: async ({ principal, body, ip }) => addSuppressions(ctx, principal.tenant.id, actorOf(principal, ip), body),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/suppressions/:id',
    auth: 'any',
    scope: 'suppressions:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Remove a suppression',
    description:
      'Takes the address off the suppression list: mail to it is sent again. A later hard bounce or complaint suppresses it anew. ' +
      'The entry of an erased person (email null, reason erased) is 409 unless ?email= names the address it was made for: ' +
      "an erasure is never lifted by accident. When ?email= is given it must be the entry's address (422 otherwise).",
    params: suppressionId,
    query: z.object({ email: emailField.optional().describe("The address of the entry; required to remove an erased person's entry") }),
    errors: [404, 409],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params, query, ip }) => {
      await removeSuppression(ctx, principal.tenant.id, actorOf(principal, ip), params.id, query.email);
      return { deleted: true, id: params.id };
    },
  });
};
