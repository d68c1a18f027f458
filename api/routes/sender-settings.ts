// The tenant's default sender: read, set and clear GET/PUT/DELETE /settings/sender, beside the spec's /settings/inbound-webhook.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { clearSenderSettings, DERIVED_LOCAL_PART, putSenderSettings, readSenderSettings } from '../../shared/campaigns/default-sender.js';
import { MAX_SHORT_TEXT } from '../../shared/campaigns/fields.js';
import { defineRoute } from '../route.js';
import { iso, statusResult, timestamp } from '../schemas/common.js';

const TAGS = ['Settings'];

/**
 * An extension of the spec: its campaign has no from_email, so a client written from it relies on this default.
 * Scoped like campaigns (campaigns:read to read, campaigns:write to change): the default only fills what a
 * campaign could name itself, at the same verified domains, so a key that may write campaigns may set it.
 */
const EXTENSION =
  "Not in the spec (an extension beside its /settings/inbound-webhook): the spec's campaign has no sender fields, so a campaign " +
  "without from_email takes the tenant's default sender, and from_name and reply_to it leaves empty the stored default's. " +
  `Until one is stored the default is derived: ${DERIVED_LOCAL_PART}@ the tenant's oldest verified sending domain, named after the tenant. ` +
  'Warm-up schedule dispatches use the stored default when it is at the domain they warm up.';

const sender = z.object({
  from_email: z.string().nullable().describe('The default From address; null when there is no default (nothing stored, no verified domain)'),
  from_name: z.string().nullable().describe('The default display name'),
  reply_to: z.string().nullable().describe('The default Reply-To'),
  source: z.enum(['settings', 'derived']).nullable().describe('settings: stored with PUT; derived: from the oldest verified sending domain; null: none'),
  updated_at: timestamp.nullable().describe('When the stored default was set; null when derived or none'),
});

const present = (v: Awaited<ReturnType<typeof readSenderSettings>>): z.input<typeof sender> => ({ ...v, updated_at: iso(v.updated_at) });

export const senderSettingsRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const base = { auth: 'any' as const, tags: TAGS };

  defineRoute(app, {
    ...base,
    method: 'GET',
    url: '/settings/sender',
    scope: 'campaigns:read',
    rateLimit: 'read',
    summary: 'Read the default sender',
    description: `The default sender in force for live sends and where it comes from. ${EXTENSION}`,
    response: sender,
    handler: async ({ principal }) => present(await readSenderSettings(ctx.sql, principal.tenant.id)),
  });

  defineRoute(app, {
    ...base,
    method: 'PUT',
    url: '/settings/sender',
    scope: 'campaigns:write',
    rateLimit: 'write',
    summary: 'Set the default sender',
    description:
      "Replaces the stored default (absent from_name or reply_to: none). from_email must be at one of the tenant's verified sending " +
      `domains (422 validation_error naming from_email otherwise); reply_to any valid address; from_name one line, at most ${MAX_SHORT_TEXT} characters. ` +
      `Audited (sender.default_set). ${EXTENSION}`,
    body: z.strictObject({
      from_email: z.string().max(1000).describe("An address at one of the tenant's verified sending domains"),
      from_name: z.string().max(1000).nullable().optional().describe('Display name'),
      reply_to: z.string().max(1000).nullable().optional().describe('Reply-To address (any valid address)'),
    }),
    response: sender,
    handler: async ({ principal, body, ip }) => present(await putSenderSettings(ctx, principal.tenant.id, actorOf(principal, ip), body)),
  });

  defineRoute(app, {
    ...base,
    method: 'DELETE',
    url: '/settings/sender',
    scope: 'campaigns:write',
    rateLimit: 'write',
    summary: 'Clear the default sender',
    description: `Removes the stored default: the derived one applies again. 404 when none is stored. Audited (sender.default_cleared). ${EXTENSION}`,
    errors: [404],
    response: statusResult,
    handler: async ({ principal, ip }) => {
      await clearSenderSettings(ctx, principal.tenant.id, actorOf(principal, ip));
      return { status: 'deleted' };
    },
  });
};
