// Super-admin seed mailboxes (/admin/seedlist): the list, one or many added, label/active/POP3 mailbox changed, deleted, and a seed's copies with expected
// versus observed placement per campaign.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import type { SeedRow } from '../../shared/deliverability/seed-mailboxes/queries.js';
import { SEED_PROVIDERS } from '../../shared/deliverability/seed-mailboxes/providers.js';
import {
  bulkCreateSeeds,
  changeSeed,
  CONTROL,
  createSeed,
  removeSeed,
  listSeeds,
  seedHits,
  type BulkRowInput,
} from '../../shared/deliverability/seed-mailboxes/service.js';
import { defineRoute } from '../route.js';
import { idParam, iso, statusResult, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: seed mailboxes'];

const provider = z.enum(SEED_PROVIDERS).describe('The mailbox provider hosting the seed (custom: any other, e.g. one hosted here)');
const label = z
  .string()
  .trim()
  .max(200)
  .refine((v) => !CONTROL.test(v), 'must not contain control characters')
  .nullable()
  .describe('Operator text, at most 200 characters');
const bounceMailboxId = z
  .string()
  .max(64)
  .nullable()
  .describe("A POP3 bounce mailbox (/bounce-mailboxes, any tenant's) the seed's copies are fetched from, for a seed hosted elsewhere; null: none");

const seed = z.object({
  id: z.string(),
  email: z.string().describe('RFC 5322 address, normalized (lower-case, A-label domain); unique; immutable'),
  provider,
  label: label.nullable(),
  active: z.boolean().describe('Active seeds receive a copy of every campaign send'),
  bounce_mailbox_id: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

const present = (s: SeedRow): z.input<typeof seed> => ({
  id: s.id,
  email: s.email,
  provider: s.provider,
  label: s.label,
  active: s.active,
  bounce_mailbox_id: s.bounce_mailbox_id,
  created_at: s.created_at.toISOString(),
  updated_at: s.updated_at.toISOString(),
});

const bulkRow = z.discriminatedUnion('status', [
  z.object({ index: z.number().int(), status: z.literal('inserted'), email: z.string(), id: z.string() }),
  z.object({ index: z.number().int(), status: z.literal('duplicate'), email: z.string() }),
  z.object({ index: z.number().int(), status: z.literal('invalid'), email: z.string().nullable(), error: z.string().describe('What is wrong with the row') }),
]);

const hit = z.object({
  id: z.string(),
  campaign_id: z.string(),
  campaign_name: z.string(),
  tenant_id: z.string(),
  email: z.string().describe('The seed address the copy went to'),
  send_id: z.string().describe("The copy's send (its Message-ID is <send_id@MAILPATH_HOSTNAME>)"),
  send_status: z.string().nullable().describe("The send's status; null while the copy is not handed to the send path"),
  sent_at: timestamp.nullable(),
  expected: z.enum(['inbox', 'none']).describe('inbox for a copy that left; none for one that never did (suppressed, simulated, invalid)'),
  observed: z
    .enum(['inbox', 'spam', 'pending', 'missing', 'not_sent'])
    .describe('inbox or spam once seen; pending until then; missing when unseen missing_after_hours (config/seedlist.yaml) after it left; not_sent'),
  observed_source: z.enum(['mx', 'pop3']).nullable().describe("Where the copy was seen: the MX, or the seed's POP3 mailbox"),
  observed_at: timestamp.nullable(),
});

export const adminSeedlistRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'GET',
    url: '/admin/seedlist',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'The seed mailboxes',
    description: 'Every seed mailbox, oldest first. Active seeds receive a copy of every campaign send (see docs/deliverability.md, "Seed mailboxes").',
    response: z.object({ items: z.array(seed), total: z.number().int() }),
    handler: async () => {
      const items = await listSeeds(ctx.sql);
      return { items: items.map(present), total: items.length };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/seedlist',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Add a seed mailbox',
    description:
      'Adds an active seed. 409 conflict when the address is a seed already; 422 for an address that is not RFC 5322 (dot-atom) or an unknown provider ' +
      'or bounce mailbox. Audited as seedlist.create.',
    body: z.object({ email: z.string().max(320), provider, label: label.optional(), bounce_mailbox_id: bounceMailboxId.optional() }).strict(),
    errors: [409, 422],
    response: seed,
    handler: async ({ body, principal, ip }) => present(await createSeed(ctx, actorOf(principal, ip), body)),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/seedlist/bulk',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Add many seed mailboxes',
    description:
      'Adds up to 500 seeds (more: 422). Each row ({ email, provider, label?, bounce_mailbox_id? }) is checked on its own: an invalid row and an ' +
      'address already listed (or given twice) are reported in its result and never stop the others, which are inserted together. Answers 200 with ' +
      'per-row results (in request order) and the totals. Audited once as seedlist.bulk_create.',
    body: z.object({ rows: z.array(z.unknown()).min(1).max(500).describe('At most 500 rows') }).strict(),
    errors: [422],
    response: z.object({ results: z.array(bulkRow), inserted: z.number().int(), duplicates: z.number().int(), invalid: z.number().int() }),
    handler: async ({ body, principal, ip }) => bulkCreateSeeds(ctx, actorOf(principal, ip), body.rows as BulkRowInput[]),
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/admin/seedlist/:id',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Change a seed mailbox',
    description:
      'Changes label and/or active (and bounce_mailbox_id); at least one is required (422 otherwise). Email and provider are immutable. Audited as ' +
      'seedlist.update with the before and after.',
    params: idParam('id'),
    body: z.object({ label: label.optional(), active: z.boolean().optional(), bounce_mailbox_id: bounceMailboxId.optional() }).strict(),
    errors: [404, 422],
    response: seed,
    handler: async ({ params, body, principal, ip }) => present(await changeSeed(ctx, actorOf(principal, ip), params.id, body)),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/admin/seedlist/:id',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Delete a seed mailbox',
    description: 'Deletes the seed and the record of its copies (campaigns already sent keep their sends). Audited as seedlist.delete.',
    params: idParam('id'),
    errors: [404],
    response: statusResult,
    handler: async ({ params, principal, ip }) => {
      await removeSeed(ctx, actorOf(principal, ip), params.id);
      return { status: 'deleted' };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/seedlist/:id/hits',
    auth: 'super_admin',
    tags: TAGS,
    summary: "A seed's copies and their placement",
    description:
      'One item per campaign the seed got a copy of, newest first: expected versus observed placement. Placement is recorded when the copy reaches ' +
      "a seed hosted here (the MX) or is fetched from the seed's POP3 mailbox; spam when the copy carries a spam marker (docs/deliverability.md, " +
      '"Seed mailboxes").',
    params: idParam('id'),
    query: z.object({
      limit: z.coerce.number().int().min(1).max(200).default(25).describe('1..200, default 25'),
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
    }),
    errors: [404, 422],
    response: z.object({ items: z.array(hit), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
    handler: async ({ params, query }) => {
      const { items, total } = await seedHits(ctx, params.id, query);
      return {
        items: items.map(({ hit: h, expected, observed }) => ({
          id: h.id,
          campaign_id: h.campaign_id,
          campaign_name: h.campaign_name,
          tenant_id: h.tenant_id,
          email: h.email,
          send_id: h.send_id,
          send_status: h.send_status,
          sent_at: iso(h.sent_at),
          expected,
          observed,
          observed_source: h.placement_source,
          observed_at: iso(h.observed_at),
        })),
        total,
        limit: query.limit,
        offset: query.offset,
      };
    },
  });
};
