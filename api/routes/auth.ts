// Account routes: register a tenant with its owner, and sign in with email and password.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { register } from '../../shared/accounts/auth/accounts.js';
import { signIn } from '../../shared/accounts/auth/sign-in.js';
import { defineRoute } from '../route.js';

export const session = z.object({
  token: z.string().describe('Session JWT; send as Authorization: Bearer <token>'),
  user_id: z.string(),
  tenant_id: z.string(),
  expires_at: z.number().int().describe('Expiry, seconds since the epoch'),
});

const email = z.email().max(254);

export const registerBody = z.strictObject({
  tenant_name: z.string().trim().min(1).max(120),
  tenant_slug: z.string().max(40),
  email,
  password: z.string().max(200),
  first_name: z.string().trim().min(1).max(100).optional(),
});

export const loginBody = z.strictObject({ email: z.string().max(254), password: z.string().max(200) });

/** A login answer when the user has two-factor sign-in on: no session yet. */
export const totpPending = z.object({
  requires_totp: z.literal(true),
  totp_session_token: z.string().describe('Short-lived token accepted only by POST /auth/2fa/challenge'),
});

export const authRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'POST',
    url: '/auth/register',
    auth: 'public',
    tags: ['Account'],
    summary: 'Register a tenant and its owner',
    description:
      'Creates a tenant (name and URL-safe slug) with its first user as owner, and returns a session. ' +
      'Slugs are 3-40 lowercase letters, digits and inner hyphens. Passwords need at least 10 characters mixing two character classes.',
    body: registerBody,
    status: 201,
    errors: [409],
    response: session,
    handler: ({ body, ip }) => register(ctx, body, ip),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/login',
    auth: 'public',
    tags: ['Account'],
    summary: 'Sign in with email and password',
    description:
      'Returns a session token, or, when the user has two-factor sign-in on, `{requires_totp: true, totp_session_token}`: ' +
      'post that token with a code to /auth/2fa/challenge within 5 minutes. A wrong email or password gives the same 401, ' +
      'whichever part was wrong. Repeated failures for one account or from one address are answered 429 with Retry-After ' +
      "for a while; a suspended tenant's users get 403.",
    body: loginBody,
    errors: [401, 403, 429],
    response: z.union([session, totpPending]),
    handler: ({ body, ip }) => signIn(ctx, body, ip),
  });
};
