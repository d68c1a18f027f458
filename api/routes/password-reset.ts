// Password routes: request a reset e-mail and set a new password with its token (public), and change it while signed in.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { changePassword } from '../../shared/accounts/auth/password-change.js';
import { confirmPasswordReset, requestPasswordReset } from '../../shared/accounts/auth/password-reset.js';
import { defineRoute } from '../route.js';
import { session } from './auth.js';

const TAGS = ['Account'];

export const passwordChangeBody = z.strictObject({ current_password: z.string().max(200), new_password: z.string().max(200) });

export const passwordResetRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'POST',
    url: '/auth/password-reset/request',
    auth: 'public',
    tags: TAGS,
    summary: 'Request a password-reset e-mail',
    description:
      'When the address belongs to an account, e-mails it a link with a single-use token valid for one hour. The answer is ' +
      'the same, and takes about as long, whether or not the account exists. At most a few e-mails per account per hour.',
    body: z.strictObject({ email: z.string().max(254) }),
    response: z.object({ status: z.literal('ok') }),
    handler: ({ body, ip }) => requestPasswordReset(ctx, body.email, ip),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/password-reset/confirm',
    auth: 'public',
    tags: TAGS,
    summary: 'Set a new password with a reset token',
    description:
      'Sets the password with the token from the e-mail. The token works once and for one hour (400 otherwise; other links ' +
      'sent before stop working too); every session issued before ends. The password follows the registration rules (422). ' +
      'Bad tokens count towards sign-in throttling of the client address (429).',
    body: z.strictObject({ token: z.string().min(1).max(200), new_password: z.string().max(200) }),
    errors: [429],
    response: z.object({ status: z.literal('password_changed') }),
    handler: ({ body, ip }) => confirmPasswordReset(ctx, body, ip),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/password',
    auth: 'user',
    tags: TAGS,
    summary: 'Change the password',
    description:
      'Sets a new password for the signed-in user after checking the current one. A wrong current_password is 401 and counts ' +
      'as a failed sign-in of the account and the client address (429 with Retry-After once locked), so a session cannot be ' +
      'used to guess the password. The new password follows the registration rules (422 naming new_password). Every other ' +
      'session and pending 2FA challenge of the user ends, as do reset links mailed before; the answer is a new session ' +
      '(like login) that replaces the one making the change, which ends too. Mailbox sessions get 403.',
    body: passwordChangeBody,
    errors: [429],
    response: session,
    handler: ({ principal, body, ip }) => changePassword(ctx, principal.user!.id, body, ip),
  });
};
