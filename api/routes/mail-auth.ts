// Public account route for workspace mailboxes: consume an invite to set the mailbox password and get a mailbox session.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { consumeInvite } from '../../shared/inbound/workspace-mailboxes/invites.js';
import { defineRoute } from '../route.js';

export const mailAuthRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'POST',
    url: '/auth/mail/invite/consume',
    auth: 'public',
    tags: ['Account'],
    summary: 'Consume a mailbox invite',
    description:
      'Sets the password of the invited mailbox and returns a 24-hour session JWT limited to it: it reads, marks and deletes that ' +
      "mailbox's messages under /mail/messages and is refused (403) everywhere else. user_id is the mailbox id (a mailbox user is " +
      'the mailbox itself, not a user of the tenant). The token works once: an unknown token is 404, a used, replaced or expired one 410. ' +
      'Passwords follow the registration rules (at least 10 characters mixing two character classes); a weak one is 422 and consumes nothing.',
    body: z.strictObject({
      token: z.string().min(1).max(200).describe('The invite token from POST /mail/mailboxes/{id}/invite'),
      new_password: z.string().max(200),
    }),
    errors: [404, 410],
    response: z.object({
      token: z.string().describe('Mailbox session JWT; send as Authorization: Bearer <token>'),
      user_id: z.string().describe('The mailbox id: the mailbox is the account'),
      tenant_id: z.string(),
      mailbox_id: z.string(),
      address: z.string(),
      expires_at: z.number().int().describe('Expiry, seconds since the epoch (24 hours after issue)'),
    }),
    handler: ({ body, ip }) => consumeInvite(ctx, body, ip),
  });
};
