// POST /campaigns/{id}/proof: a campaign rendered for a chosen contact and sent to up to five addresses, marked as a proof and kept out of its stats;
// POST /campaigns/{id}/preview: the same message rendered and answered, not sent.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { MAX_PROOF_RECIPIENTS, PREVIEW_ADDRESS, previewCampaign, ProofRefused, sendProof } from '../../shared/campaigns/proof.js';
import { replyWithQuota } from '../quota-headers.js';
import { defineRoute } from '../route.js';
import { idParam } from '../schemas/common.js';
import { refusalError } from '../send-refusals.js';

const body = z.strictObject({
  to: z.array(z.string().max(320)).min(1).max(MAX_PROOF_RECIPIENTS).describe(`1..${MAX_PROOF_RECIPIENTS} addresses the proof goes to (repeats count once)`),
  contact_id: z
    .string()
    .max(64)
    .optional()
    .describe('The contact the message is rendered for (its fields in Liquid); unset: rendered as nobody at each proof address'),
  variant: z.enum(['a', 'b']).optional().describe("An A/B campaign's subject to use (default a)"),
});

const previewBody = body.omit({ to: true });

const preview = z.object({
  from: z.string().describe("The sender's address"),
  to: z.string().describe(`The contact's address, or ${PREVIEW_ADDRESS} when rendered as nobody`),
  subject: z.string(),
  html: z.string().nullable(),
  text: z.string().nullable(),
  variant: z.enum(['a', 'b']).nullable().describe("An A/B campaign's variant rendered; null without an A/B test"),
});

const proof = z.object({
  to: z.string(),
  send_id: z.string().describe("The proof's send: GET /sends/{id} shows it with source proof"),
  message_id: z.string(),
  status: z.string().describe('As a transactional send: queued, dropped (a suppressed address), deferred (the warm-up cap), simulated (a test key)'),
});

export const campaignProofRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'POST',
    url: '/campaigns/:id/preview',
    auth: 'any',
    scope: 'campaigns:read',
    rateLimit: 'read',
    tags: ['Campaigns'],
    summary: 'Preview a campaign for a contact',
    description:
      'The message a proof would carry (POST /campaigns/{id}/proof: the same checks, 422 and 412, and the same ' +
      'renderer, render threads and budget), answered instead of sent, in any status: for contact_id (its fields in Liquid) or as ' +
      `nobody at ${PREVIEW_ADDRESS}. Links keep the campaign's UTM tags but no click tracking, and there is no open pixel: a preview ` +
      "names no send. Nothing is stored, sent, counted or audited. 404 for a contact_id that is not the tenant's.",
    params: idParam('id'),
    body: previewBody,
    errors: [404, 412],
    response: preview,
    handler: async ({ principal, params, body: request }) => {
      const caller = {
        tenant: { id: principal.tenant.id, status: principal.tenant.status, is_sandbox: principal.tenant.is_sandbox },
        mode: principal.key?.mode ?? ('live' as const),
      };
      return previewCampaign(ctx, caller, params.id, request);
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/campaigns/:id/proof',
    auth: 'any',
    scope: ['campaigns:write', 'transactional:send'],
    rateLimit: 'send',
    tags: ['Campaigns'],
    summary: 'Send a proof of a campaign',
    description:
      `The campaign's message rendered for contact_id (or as nobody: the proof address and empty fields), with "[Proof] " before its ` +
      `subject, sent to each of up to ${MAX_PROOF_RECIPIENTS} addresses, in any status. Checked as a send is: a target, a sender at a ` +
      'verified domain and content that parses (422, 412). Each proof is a send of its own (source proof) through the same gates, DKIM ' +
      "signing, tracking and delivery as the campaign's messages: it counts against the monthly quota (402 at the cap, with the " +
      "X-Quota-* headers) and the warm-up allowance, and a suppressed address is dropped. It is not the campaign's: no counters, events " +
      "feed or stats, and its unsubscribe link changes nothing. 404 for a contact_id that is not the tenant's. Audited as campaign.proof_sent.",
    params: idParam('id'),
    body,
    status: 202,
    errors: [402, 404, 412],
    response: z.object({ proofs: z.array(proof) }),
    handler: async ({ principal, params, body: request, ip, reply }) => {
      const caller = {
        tenant: { id: principal.tenant.id, status: principal.tenant.status, is_sandbox: principal.tenant.is_sandbox },
        actor: actorOf(principal, ip),
        mode: principal.key?.mode ?? ('live' as const),
        apiKeyId: principal.key?.id ?? null,
      };
      try {
        const proofs = await sendProof(ctx, caller, params.id, request);
        await replyWithQuota(ctx, reply, principal.tenant.id);
        return { proofs };
      } catch (err) {
        const answer = err instanceof ProofRefused ? refusalError(err.refusal) : err;
        await replyWithQuota(ctx, reply, principal.tenant.id, answer);
        throw answer;
      }
    },
  });
};
