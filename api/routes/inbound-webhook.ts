// The tenant's inbound webhook settings: read, change (secret revealed once, on creation or rotation), and test-send.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { getWebhookSettings, updateWebhookSettingsFor, type WebhookSettingsView } from '../../shared/webhooks/inbound/service.js';
import { MAX_URL_LENGTH } from '../../shared/webhooks/inbound/url-policy.js';
import { defineRoute } from '../route.js';
import { iso, queryFlag, timestamp } from '../schemas/common.js';

const TAGS = ['Inbound webhook'];

/**
 * The webhook decides where every inbound message of the tenant goes and its answers reveal the signing secret,
 * so it is as powerful as the account itself, and the spec's scope list has no scope for it: a user session, or
 * an API key without scope restrictions (scope 'unrestricted', checked by the guard before the body is read).
 */

const settings = z.object({
  webhook_url: z.string().nullable().describe('Where inbound mail is POSTed (https, public address); null when none is set'),
  enabled: z.boolean().describe('Whether inbound mail is POSTed; needs webhook_url'),
  secret: z.string().nullable().describe('The signing secret (whsec_…) in clear: only in the PATCH answer that created or rotated it, null otherwise'),
  secret_revealed_once: z.boolean().describe('True only in the answer carrying the secret: it is never shown again'),
  secret_rotated_at: timestamp.nullable().describe('When the current secret was made'),
  updated_at: timestamp.nullable(),
});

const present = (v: WebhookSettingsView): z.input<typeof settings> => ({
  webhook_url: v.webhook_url,
  enabled: v.enabled,
  secret: v.secret,
  secret_revealed_once: v.secret_revealed_once,
  secret_rotated_at: iso(v.secret_rotated_at),
  updated_at: iso(v.updated_at),
});

export const inboundWebhookRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/settings/inbound-webhook',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read the inbound webhook settings',
    description: 'The webhook URL and switch. The secret is never shown here (secret is null). Never configured: webhook_url null, enabled false.',
    response: settings,
    handler: async ({ principal }) => {
      return present(await getWebhookSettings(ctx, principal.tenant.id));
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/settings/inbound-webhook',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Change the inbound webhook settings',
    description:
      'Changes only the fields given. webhook_url must be https and its host must resolve only to public addresses ' +
      '(not private, loopback, link-local, CGNAT, multicast or unspecified; checked again before every POST), else 422 naming webhook_url. ' +
      'enabled: true needs a URL (422); webhook_url: null removes it and, unless enabled is given, switches the webhook off. ' +
      'The first call creates the signing secret and ?rotate_secret=true replaces it: only that answer carries it in secret ' +
      '(secret_revealed_once true); store it, it is never shown again. A rotated secret signs every POST from then on.',
    query: z.strictObject({ rotate_secret: queryFlag.optional().describe('true: generate a new signing secret') }),
    body: z.strictObject({
      webhook_url: z.string().max(MAX_URL_LENGTH).nullable().optional().describe('https URL receiving inbound mail; null removes it'),
      enabled: z.boolean().optional(),
    }),
    response: settings,
    handler: async ({ principal, query, body, ip }) => {
      const view = await updateWebhookSettingsFor(ctx, principal.tenant.id, actorOf(principal, ip), body, { rotateSecret: query.rotate_secret ?? false });
      return present(view);
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/settings/inbound-webhook/test-send',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Send a test message to the webhook',
    description:
      'POSTs a small synthetic message to the configured URL exactly as inbound mail is delivered (same headers and signature, ' +
      'plus X-MP-Inbound-Test: true), once, without retries, enabled or not. Reports whether a real delivery would have ' +
      'counted as delivered (a 2xx within the timeout), the HTTP status (null when there was no answer), the round trip ' +
      'and what went wrong. 409 conflict when no webhook URL is configured.',
    errors: [409],
    response: z.object({
      delivered: z.boolean(),
      http_status: z.number().int().nullable(),
      round_trip_ms: z.number().int(),
      error: z.string().nullable(),
    }),
    handler: async ({ principal }) => {
      return ctx.testWebhook(principal.tenant.id);
    },
  });
};
