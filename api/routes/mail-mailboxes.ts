// Workspace mailboxes of the caller's tenant: create at a verified domain, list, read, delete, and invite the person who reads it.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { createInvite, INVITE_TTL_MS } from '../../shared/inbound/workspace-mailboxes/invites.js';
import type { MailboxRow } from '../../shared/inbound/workspace-mailboxes/queries.js';
import { createMailbox, getMailbox, listMailboxPage, removeMailbox } from '../../shared/inbound/workspace-mailboxes/service.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Inbound'];

const ACCESS =
  '\n\nCallers: a user session, or an API key without scopes (all access); a scoped key gets 403 invalid_scope, ' +
  'since no scope covers mailboxes. Mailbox sessions get 403.';

const mailbox = z.object({
  id: z.string(),
  address: z.string().describe('Lower-case; unique on the whole platform'),
  display_name: z.string().nullable(),
  domain_id: z.string().describe('The verified tenant domain the address is at'),
  password_set: z.boolean().describe('Whether an invite was consumed, so the mailbox can be signed in to'),
  created_at: timestamp,
  updated_at: timestamp,
});

const present = (m: MailboxRow): z.input<typeof mailbox> => ({
  id: m.id,
  address: m.address,
  display_name: m.display_name,
  domain_id: m.domain_id,
  password_set: m.password_set,
  created_at: iso(m.created_at),
  updated_at: iso(m.updated_at),
});

const mailboxId = idParam('id');

export const mailboxRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'POST',
    url: '/mail/mailboxes',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Create a workspace mailbox',
    description:
      'Creates a mailbox at an address of a verified domain of the tenant; mail the MX accepts for it is kept and read through /mail/messages. ' +
      'The address is trimmed and lower-cased; its local part takes ASCII letters, digits and inner . _ - (no %, !, + or quoted forms). ' +
      "A malformed address, a domain that is not the tenant's, or one not verified yet is 422 naming address; an address that is already a mailbox " +
      'anywhere is 409.' +
      ACCESS,
    body: z.strictObject({
      address: z.string().max(1000).describe('local@domain, the domain verified for this tenant'),
      display_name: z.string().max(1000).optional().describe('Shown next to the address; one line, at most 100 characters'),
    }),
    status: 201,
    errors: [409],
    response: mailbox,
    handler: async ({ principal, body, ip }) => {
      return present(await createMailbox(ctx, principal.tenant.id, actorOf(principal, ip), body));
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/mail/mailboxes',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List workspace mailboxes',
    description: `The tenant's mailboxes, newest first. Cursor pagination: pass next_cursor as ?after=.${ACCESS}`,
    query: cursorPagination,
    list: true,
    response: mailbox,
    handler: async ({ principal, query }) => {
      const page = await listMailboxPage(ctx, principal.tenant.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/mail/mailboxes/:id',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a workspace mailbox',
    description: `One mailbox of the tenant.${ACCESS}`,
    params: mailboxId,
    errors: [404],
    response: mailbox,
    handler: async ({ principal, params }) => {
      return present(await getMailbox(ctx, principal.tenant.id, params.id));
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/mail/mailboxes/:id',
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete a workspace mailbox',
    description:
      'Deletes the mailbox with all its messages and invites; its sessions stop working at once and mail to the address is no longer ' +
      `kept for it.${ACCESS}`,
    params: mailboxId,
    errors: [404],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params, ip }) => {
      await removeMailbox(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { deleted: true, id: params.id };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/mail/mailboxes/:id/invite',
    grantsAccess: true,
    auth: 'any',
    scope: 'unrestricted',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Invite the reader of a mailbox',
    description:
      `Issues a single-use invite token, valid for ${INVITE_TTL_MS / 3_600_000} hours and shown only in this answer (Mailpath keeps its SHA-256). ` +
      'Hand it to the person who reads the mailbox: POST /auth/mail/invite/consume with it and a new password sets the mailbox password and ' +
      'returns a 24-hour session limited to this mailbox. A new invite ends every earlier unused one (trying one then is 410). ' +
      'Consuming an invite again later resets the password and ends older mailbox sessions.' +
      ACCESS,
    params: mailboxId,
    status: 201,
    errors: [404],
    response: z.object({
      mailbox_id: z.string(),
      address: z.string(),
      token: z.string().describe('The invite token; shown once'),
      expires_at: timestamp,
    }),
    handler: async ({ principal, params, ip }) => {
      const invite = await createInvite(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { ...invite, expires_at: iso(invite.expires_at) };
    },
  });
};
