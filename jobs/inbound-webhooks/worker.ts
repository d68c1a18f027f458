// Inbound-webhook delivery: each stored message's copy for a tenant, signed with X-MP-Inbound-Sig over its exact bytes and carried by
// the one claim loop of the webhook outboxes (jobs/webhook-outbox.ts).
import { claimDueDeliveries, type ClaimedDelivery } from '../../shared/webhooks/inbound/queries.js';
import { openSecret } from '../../shared/webhooks/inbound/secret.js';
import { deliverDue, startOutboxDelivery, type OutboxDeps, type OutboxPipeline, type RunningOutbox } from '../webhook-outbox.js';
import { webhookHeaders } from './deliver.js';

export type WebhookDeps = OutboxDeps;

const INBOUND_OUTBOX: OutboxPipeline<ClaimedDelivery> = {
  outbox: 'inbound',
  claim: claimDueDeliveries,
  // The tenant switched the webhook off or removed it while the delivery waited.
  unusable(d) {
    if (d.enabled === null) return 'webhook not configured';
    if (!d.webhook_url) return 'webhook URL removed';
    if (!d.enabled) return 'webhook disabled';
    if (!d.secret_sealed) return 'webhook has no signing secret';
    if (!d.raw) return 'the inbound message is no longer stored';
    return undefined;
  },
  sign(vault, d) {
    const secret = openSecret(vault, d.tenant_id, d.secret_sealed!);
    const post = { url: d.webhook_url!, secret, tenantId: d.tenant_id, recipient: d.recipient, deliveryId: d.id, attempt: d.attempts, body: d.raw! };
    return { url: post.url, headers: webhookHeaders(post), body: post.body };
  },
};

/** One pass over the inbound outbox (jobs/webhook-outbox.ts deliverDue). */
export const deliverDueInboundWebhooks = (deps: WebhookDeps, limit?: number) => deliverDue(deps, INBOUND_OUTBOX, limit);

/** The outbound role's loop over the inbound outbox. */
export const startInboundWebhookDelivery = (deps: WebhookDeps): RunningOutbox => startOutboxDelivery(deps, INBOUND_OUTBOX);
