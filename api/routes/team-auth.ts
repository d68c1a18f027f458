// Public account route for team invites: accept one to create the user with the invited role and get a session.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { acceptInvite } from '../../shared/accounts/team/accept.js';
import { defineRoute } from '../route.js';

export const acceptInviteBody = z.strictObject({
  token: z.string().min(1).max(200).describe('The invite token (from the accept link)'),
  password: z.string().max(200),
  first_name: z.string().trim().min(1).max(100).optional(),
});

export const teamAuthRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'POST',
    url: '/auth/accept-invite',
    auth: 'public',
    tags: ['Account'],
    summary: 'Accept a team invite',
    description:
      "Creates the invited user (the invite's e-mail address and role) with this password and returns a session, like login. " +
      'The token works once: an unknown token is 404; a used, revoked or expired one 410. Passwords follow the registration rules ' +
      '(at least 10 characters mixing two character classes, not containing the address or the tenant slug); a weak one is 422 and ' +
      'consumes nothing. An address that became a user elsewhere meanwhile is 409; a suspended tenant 403 (the invite stays unused).',
    body: acceptInviteBody,
    errors: [403, 404, 409, 410],
    response: z.object({
      token: z.string().describe('Session JWT; send as Authorization: Bearer <token>'),
      user_id: z.string(),
      tenant_id: z.string(),
      expires_at: z.number().int().describe('Expiry, seconds since the epoch'),
    }),
    handler: ({ body, ip }) => acceptInvite(ctx, body, ip),
  });
};
