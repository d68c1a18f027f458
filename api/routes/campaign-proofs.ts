// POST /campaigns/{id}/proof: a campaign rendered for a chosen contact and sent to up to five addresses, marked as a proof and kept out of its stats.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { MAX_PROOF_RECIPIENTS, ProofRefused, sendProof } from '../../shared/campaigns/proof.js';
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
