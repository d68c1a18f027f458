// Two-factor sign-in routes: TOTP enrolment, verification, status and disabling for the signed-in user, and the public login challenge.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { completeTotpChallenge } from '../../shared/accounts/auth/sign-in.js';
import { disableTotp, enrollTotp, totpStatus, verifyTotpEnrollment } from '../../shared/accounts/auth/two-factor.js';
import { defineRoute } from '../route.js';
import { timestamp } from '../schemas/common.js';
import { session } from './auth.js';

const TAGS = ['Account'];

export const totpChallengeBody = z.strictObject({
  totp_session_token: z.string().min(1).max(4096),
  code: z.string().min(1).max(64).describe('6-digit TOTP code or a recovery code such as k7m2x-9qfpa'),
});

export const twoFactorRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'POST',
    url: '/auth/2fa/enroll',
    auth: 'user',
    tags: TAGS,
    summary: 'Start two-factor enrolment',
    description:
      'Creates a TOTP secret (stored sealed) and returns it with its otpauth:// URL and that URL as a PNG QR code data URL, ' +
      'for an authenticator app. 2FA is not on until POST /auth/2fa/verify; enrolling again before that replaces the secret. ' +
      '409 while 2FA is enabled.',
    errors: [409],
    response: z.object({
      secret: z.string().describe('Base32 secret, for typing into an authenticator instead of scanning'),
      otpauth_url: z.string().describe('otpauth://totp/Mailpath:<email>?secret=…&issuer=Mailpath'),
      qr_code_dataurl: z.string().describe('data:image/png;base64,… QR code of otpauth_url'),
    }),
    handler: ({ principal }) => enrollTotp(ctx, principal.user!.id),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/2fa/verify',
    auth: 'user',
    tags: TAGS,
    summary: 'Enable two-factor sign-in',
    description:
      'Checks a current code of the pending secret and enables 2FA. Returns 8 single-use recovery codes: this is the only time ' +
      'they are shown (they are stored as bcrypt hashes). A wrong code is 401; 409 when nothing is pending or 2FA is already on.',
    body: z.strictObject({
      code: z
        .string()
        .trim()
        .regex(/^\d{6}$/, 'must be the 6-digit code'),
    }),
    errors: [409],
    response: z.object({ enabled_at: timestamp, recovery_codes: z.array(z.string()).length(8) }),
    handler: ({ principal, body, ip }) => verifyTotpEnrollment(ctx, principal.user!.id, body.code, ip),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/auth/2fa/status',
    auth: 'user',
    tags: TAGS,
    summary: 'Two-factor status',
    description: 'Whether two-factor sign-in is on for the signed-in user, since when, and how many recovery codes are left.',
    response: z.object({ enabled: z.boolean(), enabled_at: timestamp.nullable(), recovery_codes_remaining: z.number().int() }),
    handler: ({ principal }) => totpStatus(ctx, principal.user!.id),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/2fa/disable',
    auth: 'user',
    tags: TAGS,
    summary: 'Disable two-factor sign-in',
    description:
      'Needs the current password (wrong: 401, counted as a failed sign-in). Deletes the secret and the recovery codes. ' +
      'Answers the same when 2FA was not on.',
    body: z.strictObject({ password: z.string().max(200) }),
    response: z.object({ status: z.literal('disabled') }),
    handler: ({ principal, body, ip }) => disableTotp(ctx, principal.user!.id, body.password, ip),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/auth/2fa/challenge',
    auth: 'public',
    tags: TAGS,
    summary: 'Complete a two-factor sign-in',
    description:
      'Takes the totp_session_token of a login answer and a 6-digit code from the authenticator (the current one or one step ' +
      'either side) or an unused recovery code, and returns the session. A wrong, expired or already used code is 401 ' +
      '(a code is accepted once; a recovery code never again). Failures count towards sign-in throttling (429).',
    body: totpChallengeBody,
    errors: [401, 403, 429],
    response: session,
    handler: ({ body, ip }) => completeTotpChallenge(ctx, body, ip),
  });
};
