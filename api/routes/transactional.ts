// POST /transactional/send: one message to one recipient, through the gates, signed and queued; quota headers on every answer.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isRefused } from '../../shared/sending/accept.js';
import { sendTransactional } from '../../shared/sending/transactional.js';
import { quotaHeaders, replyWithQuota } from '../quota-headers.js';
import { refusalError } from '../send-refusals.js';
import { defineRoute } from '../route.js';
import { idempotencyKeyOf } from '../idempotency-key.js';

const TAGS = ['Transactional'];

const attachment = z.strictObject({
  filename: z.string().min(1).max(255).describe('File name shown to the recipient (no path, no line breaks)'),
  content: z.string().describe('The file, base64-encoded (RFC 4648 with padding; line breaks allowed)'),
  content_type: z.string().max(255).optional().describe('MIME type, e.g. application/pdf; guessed from the file name when absent'),
});

const body = z.strictObject({
  to: z.string().max(1000).describe('The one recipient address'),
  from_email: z
    .string()
    .max(1000)
    .describe("Sender address; its domain must be one of the tenant's verified sending domains (else 422); with a test key, any domain the tenant has added"),
  from_name: z.string().max(1000).optional().describe('Display name of the sender (one line)'),
  subject: z.string().max(10_000).optional().describe('Subject (one line, at most 998 characters); required unless template_id is given'),
  body_text: z.string().optional().describe('Plain-text body'),
  body_html: z.string().optional().describe('HTML body; with body_text the message is multipart/alternative'),
  template_id: z.string().max(64).optional().describe('A stored template to render instead of subject/body_text/body_html'),
  variables: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Template variables; `custom_fields` is also exposed as custom_fields.<key>; contact.email is the recipient'),
  reply_to: z.string().max(1000).optional().describe('Reply-To address'),
  headers: z
    .record(z.string(), z.string())
    .optional()
    .describe('Extra headers (e.g. X-Campaign). Identity, routing and MIME headers are refused; no line breaks'),
  attachments: z.array(attachment).optional().describe('Files to attach; count and decoded total size are capped (config/limits.yaml send)'),
  bounce_risk_check_enabled: z
    .boolean()
    .optional()
    .describe('Check the recipient before accepting: 422 when its domain has no MX or A record (or a null MX) or the address is suppressed'),
  track_opens: z.boolean().optional().describe('Track opens: an open pixel is added before </body> of body_html (default false)'),
  track_clicks: z
    .boolean()
    .optional()
    .describe('Track clicks: every http(s) link of body_html goes through a signed redirect that records the click (default false)'),
});

const answer = z.object({
  message_id: z.string().describe("The send's id: GET /sends/{id}, GET /events?message_id="),
  status: z
    .enum(['queued', 'deferred', 'dropped', 'simulated'])
    .describe(
      'queued: accepted for delivery; deferred: over the warm-up cap, sent after 00:00 UTC; dropped: the recipient is suppressed; simulated: test ' +
        'key or sandbox tenant, never delivered',
    ),
});

export const transactionalRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'POST',
    url: '/transactional/send',
    idempotent: true,
    auth: 'any',
    scope: 'transactional:send',
    rateLimit: 'send',
    tags: TAGS,
    summary: 'Send one transactional message',
    description:
      'Sends one message to one recipient. The message passes the outbound gates in order (suspended tenant 403, test key → simulated, ' +
      'sandbox tenant → simulated, suppressed recipient → dropped, monthly quota 402, warm-up cap → deferred to 00:00 UTC), is composed ' +
      "(Message-ID, Date, multipart/alternative), DKIM-signed with the domain's active key and committed with its delivery job before the 202. " +
      '412 while the tenant has no domain with SPF, DKIM and DMARC verified; a test key may send from any domain the tenant has added ' +
      "(simulated, signed with that domain's key: GET /sends/{id}/raw shows the message). Every answer carries X-Quota-Used, X-Quota-Cap, " +
      'X-Quota-Remaining (and X-Quota-Warning: 1 from 80 % of the cap). Idempotency-Key header (optional): the same key with the same body ' +
      'within 24 h returns the first answer (with Idempotent-Replayed: true); the same key with another body is 409.',
    body,
    status: 202,
    errors: [402, 404, 409, 412, 413],
    response: answer,
    handler: async ({ principal, body: request, request: raw, reply }) => {
      const caller = {
        tenant: { id: principal.tenant.id, status: principal.tenant.status, is_sandbox: principal.tenant.is_sandbox },
        mode: principal.key?.mode ?? ('live' as const),
        apiKeyId: principal.key?.id ?? null,
      };
      try {
        const result = await sendTransactional(ctx, caller, request, idempotencyKeyOf(raw.headers['idempotency-key']));
        if (isRefused(result)) throw refusalError(result.refusal);
        if (result.quota) reply.headers(quotaHeaders(result.quota));
        if (result.replayed) reply.header('Idempotent-Replayed', 'true');
        reply.code(result.httpStatus);
        return result.answer as z.input<typeof answer>;
      } catch (err) {
        await replyWithQuota(ctx, reply, principal.tenant.id, err);
        throw err;
      }
    },
  });
};
