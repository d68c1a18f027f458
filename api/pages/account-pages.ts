// The pages platform e-mails link to, outside /api/v1: /reset-password and /accept-invite, plain HTML forms posted back to the same path and handled
// server-side.
import type { FastifyError, FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AppError } from '../../shared/kernel/errors.js';
import { showInviteForm, submitInvite, INVITE_PATH } from './accept-invite.js';
import { problemPage, type PageAnswer } from './answer.js';
import { PAGE_HEADERS } from './html.js';
import { RESET_PATH, showResetForm, submitReset } from './reset-password.js';

/** A form of a token and two passwords is well under this. */
const FORM_BODY_LIMIT = 16 * 1024;

function send(reply: FastifyReply, answer: PageAnswer): FastifyReply {
  return reply
    .code(answer.status)
    .headers(answer.headers ?? {})
    .send(answer.html);
}

/**
 * Encapsulated: its body parser, error handler and headers apply to these pages only. The root's guard still runs
 * first, so every request here counts against the client address's `public` rate-limit bucket, like the public
 * JSON endpoints, and a 429 from it is rendered as a page by the error handler below.
 */
export const accountPages: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  // The forms post urlencoded; nothing else (JSON included) is read here: 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
    done(null, new URLSearchParams(body as string));
  });
  // After the error handler too, so every answer of these paths, refusals included, has the strict headers.
  app.addHook('onSend', async (_request, reply, payload) => {
    reply.headers(PAGE_HEADERS);
    return payload;
  });
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const appError = err instanceof AppError ? err : undefined;
    const clientStatus =
      err.code?.startsWith('FST_') && err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : undefined;
    const status = appError?.status ?? clientStatus ?? 500;
    // The error only: the request's URL and body carry the token.
    if (status >= 500) request.log.error({ err }, 'account page failed');
    return send(reply, problemPage(status, appError));
  });

  const options = { config: { auth: 'public' as const }, schema: { hide: true } };
  app.get(RESET_PATH, options, async (request, reply) => send(reply, showResetForm(ctx, request.query)));
  app.post(RESET_PATH, options, async (request, reply) => send(reply, await submitReset(ctx, request.body, request.ip)));
  app.get(INVITE_PATH, options, async (request, reply) => send(reply, showInviteForm(ctx, request.query)));
  app.post(INVITE_PATH, options, async (request, reply) => send(reply, await submitInvite(ctx, request.body, request.ip)));
};
