// POP3 bounce mailboxes of the caller's tenant: create, list, read, change, delete, and verify with a real login.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import type { BounceMailboxRow } from '../../shared/delivery/bounce-mailboxes/queries.js';
import {
  changeBounceMailbox,
  createBounceMailbox,
  DEFAULT_POLL_INTERVAL_S,
  getBounceMailbox,
  listTenantBounceMailboxes,
  MAX_MAILBOXES_PER_TENANT,
  MAX_POLL_INTERVAL_S,
  removeBounceMailbox,
  verifyBounceMailbox,
} from '../../shared/delivery/bounce-mailboxes/service.js';
import { defineRoute } from '../route.js';
import { idParam, iso, statusResult, timestamp } from '../schemas/common.js';

const TAGS = ['Bounce mailboxes'];

const SCOPE_NOTE =
  ' Scopes: domains:read to read, domains:write to change (bounce mailboxes handle the bounces of the sending domains; the spec names no scope of their own).';

const mailbox = z.object({
  id: z.string(),
  name: z.string(),
  host: z.string().describe('The POP3 server: a host name or an IP address'),
  port: z.number().int(),
  username: z.string(),
  enabled: z.boolean().describe('Polled only while true'),
  delete_after_read: z.boolean().describe("Fetched messages are deleted on the server (at the end of the poll's session)"),
  poll_interval_s: z.number().int().describe('Seconds between polls (the poller ticks every minute)'),
  use_tls_implicit: z.boolean().describe('TLS from the first byte (POP3S, port 995); false: plain POP3 (port 110)'),
  last_polled_at: timestamp.nullable().describe('When the last poll ended; null before the first'),
  last_poll_error: z.string().nullable().describe('Why the last poll failed (login refused, unreachable, …); null when it worked'),
  next_poll_at: timestamp.describe('When the mailbox is next due'),
  messages_fetched: z.number().int().describe('Messages fetched and handed to the bounce intake since the mailbox was created'),
  created_at: timestamp,
  updated_at: timestamp,
});

// The password is sealed at rest and never returned: not here, not in any answer.
const present = (row: BounceMailboxRow): z.input<typeof mailbox> => ({
  id: row.id,
  name: row.name,
  host: row.host,
  port: row.port,
  username: row.username,
  enabled: row.enabled,
  delete_after_read: row.delete_after_read,
  poll_interval_s: row.poll_interval_s,
  use_tls_implicit: row.use_tls_implicit,
  last_polled_at: iso(row.last_polled_at),
  last_poll_error: row.last_poll_error,
  next_poll_at: iso(row.next_poll_at)!,
  messages_fetched: row.messages_fetched,
  created_at: iso(row.created_at)!,
  updated_at: iso(row.updated_at)!,
});

const fields = {
  name: z.string().max(1000).describe('1..200 characters'),
  host: z.string().max(300).describe('Host name or IP address of the POP3 server; it must resolve only to public addresses'),
  port: z.number().int().describe('1..65535 (995 for POP3S, 110 for plain POP3)'),
  username: z.string().max(1000).describe('1..320 characters'),
  password: z.string().max(1024).describe('Sealed at rest (AES-256-GCM under the master key), never returned'),
  enabled: z.boolean().describe('Default true'),
  delete_after_read: z.boolean().describe('Default false: fetched messages stay on the server (remembered by UIDL, never fetched twice)'),
  poll_interval_s: z
    .number()
    .int()
    .describe(`Seconds between polls, from the configured minimum (60) to ${MAX_POLL_INTERVAL_S}; default ${DEFAULT_POLL_INTERVAL_S}`),
  use_tls_implicit: z.boolean().describe('Default true'),
};

const mailboxId = idParam('mailboxID');

export const bounceMailboxRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/bounce-mailboxes',
    auth: 'any',
    scope: 'domains:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List the bounce mailboxes',
    description: `The tenant's POP3 bounce mailboxes, newest first, with the outcome of their last poll. Passwords are never shown.${SCOPE_NOTE}`,
    response: z.object({ items: z.array(mailbox) }),
    handler: async ({ principal }) => ({ items: (await listTenantBounceMailboxes(ctx, principal.tenant.id)).map(present) }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/bounce-mailboxes',
    auth: 'any',
    scope: 'domains:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Add a bounce mailbox',
    description:
      "A POP3 mailbox elsewhere that receives bounces (DSNs) and feedback-loop reports (ARF) for the tenant's mail. Every poll_interval_s " +
      'Mailpath logs in, fetches the messages it has not fetched before (by UIDL, also across restarts) and hands each to the same ' +
      "bounce and complaint intake as the MX; a report there may only concern the tenant's own sends. name, host, port, username and " +
      `password are required; 422 validation_error names a bad field. At most ${MAX_MAILBOXES_PER_TENANT} per tenant. ` +
      'Nothing is checked against the server here: call POST /bounce-mailboxes/{mailboxID}/verify.' +
      SCOPE_NOTE,
    body: z.strictObject({
      name: fields.name,
      host: fields.host,
      port: fields.port,
      username: fields.username,
      password: fields.password,
      enabled: fields.enabled.optional(),
      delete_after_read: fields.delete_after_read.optional(),
      poll_interval_s: fields.poll_interval_s.optional(),
      use_tls_implicit: fields.use_tls_implicit.optional(),
    }),
    response: mailbox,
    handler: async ({ principal, body, ip }) => present(await createBounceMailbox(ctx, principal.tenant.id, actorOf(principal, ip), body)),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/bounce-mailboxes/:mailboxID',
    auth: 'any',
    scope: 'domains:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a bounce mailbox',
    description: `The mailbox's settings (without its password) and the outcome of its last poll.${SCOPE_NOTE}`,
    params: mailboxId,
    errors: [404],
    response: mailbox,
    handler: async ({ principal, params }) => present(await getBounceMailbox(ctx, principal.tenant.id, params.mailboxID)),
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/bounce-mailboxes/:mailboxID',
    auth: 'any',
    scope: 'domains:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Change a bounce mailbox',
    description:
      'Changes the fields given (a new password replaces the sealed one); the others keep their value. The mailbox is polled at the next ' +
      'tick (within a minute) when enabled.' +
      SCOPE_NOTE,
    params: mailboxId,
    body: z.strictObject({
      name: fields.name.optional(),
      host: fields.host.optional(),
      port: fields.port.optional(),
      username: fields.username.optional(),
      password: fields.password.optional(),
      enabled: fields.enabled.optional(),
      delete_after_read: fields.delete_after_read.optional(),
      poll_interval_s: fields.poll_interval_s.optional(),
      use_tls_implicit: fields.use_tls_implicit.optional(),
    }),
    errors: [404],
    response: mailbox,
    handler: async ({ principal, params, body, ip }) =>
      present(await changeBounceMailbox(ctx, principal.tenant.id, actorOf(principal, ip), params.mailboxID, body)),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/bounce-mailboxes/:mailboxID',
    auth: 'any',
    scope: 'domains:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete a bounce mailbox',
    description: `Stops polling it and forgets its settings and the UIDLs it fetched; the reports already fetched stay recorded.${SCOPE_NOTE}`,
    params: mailboxId,
    errors: [404],
    response: statusResult,
    handler: async ({ principal, params, ip }) => {
      await removeBounceMailbox(ctx, principal.tenant.id, actorOf(principal, ip), params.mailboxID);
      return { status: 'deleted' };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/bounce-mailboxes/:mailboxID/verify',
    auth: 'any',
    scope: 'domains:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Verify a bounce mailbox',
    description:
      'Performs a real connect and login (USER/PASS) with the stored settings, then QUIT: nothing is fetched or deleted. ' +
      '{ok: true, error: null}, or {ok: false, error} saying why not: the host refused by the address policy or unresolvable, ' +
      "the server unreachable or silent, TLS failing, or the login refused (the server's words)." +
      SCOPE_NOTE,
    params: mailboxId,
    errors: [404],
    response: z.object({ ok: z.boolean(), error: z.string().nullable() }),
    handler: async ({ principal, params }) => verifyBounceMailbox(ctx, principal.tenant.id, params.mailboxID),
  });
};
