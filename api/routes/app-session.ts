// The dashboard's sign-in: the account routes that hand out a session, answering with an HttpOnly cookie and a CSRF
// token instead of the JWT (api/app-session.ts), so no page script ever holds a credential.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { decodeJwt } from 'jose';
import { z } from 'zod';
import { register } from '../../shared/accounts/auth/accounts.js';
import { changePassword } from '../../shared/accounts/auth/password-change.js';
import { completeTotpChallenge, signIn } from '../../shared/accounts/auth/sign-in.js';
import { signOutSession } from '../../shared/accounts/auth/sign-out.js';
import { acceptInvite } from '../../shared/accounts/team/accept.js';
import { clearAppSession, csrfTokenFor, establishAppSession, presentedCredential } from '../app-session.js';
import { defineRoute } from '../route.js';
import { loginBody, registerBody, totpPending } from './auth.js';
import { totpChallengeBody } from './auth-2fa.js';
import { passwordChangeBody } from './password-reset.js';
import { acceptInviteBody } from './team-auth.js';

const TAGS = ['Dashboard session'];

const appSession = z.object({
  user_id: z.string(),
  tenant_id: z.string(),
  expires_at: z.number().int().describe('Expiry of the session cookie, seconds since the epoch'),
  csrf_token: z.string().describe('Send as the X-CSRF-Token header on every request that changes something'),
});

const COOKIE_NOTE =
  'Like its Bearer twin, but the session is set as the HttpOnly, Secure, SameSite=Strict cookie ' +
  '`__Host-mailpath_session` and the answer carries a CSRF token instead of the JWT. ';

export const appSessionRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const nowSeconds = () => Math.floor(ctx.clock.now().getTime() / 1000);

  defineRoute(app, {
    method: 'POST',
    url: '/auth/session',
    auth: 'public',
    tags: TAGS,
    summary: 'Sign the dashboard in',
    description: `${COOKIE_NOTE}Same rules as POST /auth/login; with two-factor sign-in on, complete it at POST /auth/session/2fa.`,
    body: loginBody,
    errors: [401, 403, 429],
    response: z.union([appSession, totpPending]),
    handler: async ({ body, ip, request, reply }) => {
      const answer = await signIn(ctx, body, ip);
      return 'token' in answer ? establishAppSession(request, reply, answer, nowSeconds()) : answer;
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/session/2fa',
    auth: 'public',
    tags: TAGS,
    summary: 'Complete the dashboard two-factor sign-in',
    description: `${COOKIE_NOTE}Same rules as POST /auth/2fa/challenge: a current TOTP code or an unused recovery code.`,
    body: totpChallengeBody,
    errors: [401, 403, 429],
    response: appSession,
    handler: async ({ body, ip, request, reply }) => establishAppSession(request, reply, await completeTotpChallenge(ctx, body, ip), nowSeconds()),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/session/register',
    auth: 'public',
    tags: TAGS,
    summary: 'Register from the dashboard',
    description: `${COOKIE_NOTE}Same rules as POST /auth/register.`,
    body: registerBody,
    status: 201,
    errors: [409],
    response: appSession,
    handler: async ({ body, ip, request, reply }) => establishAppSession(request, reply, await register(ctx, body, ip), nowSeconds()),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/session/accept-invite',
    auth: 'public',
    tags: TAGS,
    summary: 'Accept a team invite from the dashboard',
    description: `${COOKIE_NOTE}Same rules as POST /auth/accept-invite.`,
    body: acceptInviteBody,
    errors: [403, 404, 409, 410],
    response: appSession,
    handler: async ({ body, ip, request, reply }) => establishAppSession(request, reply, await acceptInvite(ctx, body, ip), nowSeconds()),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/session/password',
    auth: 'user',
    tags: TAGS,
    summary: 'Change the password from the dashboard',
    description: `${COOKIE_NOTE}Same rules as POST /auth/password: every other session of the user ends, this one is replaced.`,
    body: passwordChangeBody,
    errors: [429],
    response: appSession,
    handler: async ({ principal, body, ip, request, reply }) =>
      establishAppSession(request, reply, await changePassword(ctx, principal.user!.id, body, ip), nowSeconds()),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/auth/session',
    auth: 'user',
    tags: TAGS,
    summary: 'The dashboard session',
    description:
      'Who the session cookie signs in and until when, with a fresh CSRF token (a reloaded page has lost the one it held). ' +
      '401 without a valid session cookie or Bearer session.',
    response: appSession,
    handler: async ({ principal, request, reply }) => {
      // The guard has verified it; only its expiry is read here.
      const expiresAt = decodeJwt(presentedCredential(request) ?? '').exp ?? nowSeconds();
      return { user_id: principal.user!.id, tenant_id: principal.tenant.id, expires_at: expiresAt, csrf_token: csrfTokenFor(request, reply) };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/auth/session',
    auth: 'public',
    tags: TAGS,
    summary: 'Sign the dashboard out',
    description:
      'Ends the session the cookie (or a Bearer session JWT) stands for, so a copy of it is refused from now on, and ' +
      "expires this browser's session and CSRF cookies. The user's other sessions stay signed in. " +
      'Public: signing out needs no valid session.',
    response: z.object({ signed_out: z.literal(true) }),
    handler: async ({ request, reply }) => {
      const credential = presentedCredential(request);
      if (credential) await signOutSession(ctx, credential);
      clearAppSession(reply);
      return { signed_out: true as const };
    },
  });
};
