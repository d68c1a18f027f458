// Event-webhook delivery: the outbox rows written with each event, signed per Standard Webhooks (every live secret) and carried by the
// one claim loop of the webhook outboxes (jobs/webhook-outbox.ts).
import { claimDueDeliveries, type ClaimedDelivery } from '../../shared/webhooks/events/queries.js';
import { activeSecrets, bodyOf, signedHeaders } from '../../shared/webhooks/events/signing.js';
import { deliverDue, startOutboxDelivery, type OutboxDeps, type OutboxPipeline, type RunningOutbox } from '../webhook-outbox.js';

export type EventWebhookDeps = OutboxDeps;

const EVENT_OUTBOX: OutboxPipeline<ClaimedDelivery> = {
  outbox: 'event',
  claim: claimDueDeliveries,
  unusable: (d) => (d.enabled ? undefined : 'webhook disabled'),
  sign(vault, d, now) {
    const secrets = activeSecrets(vault, { ...d, id: d.webhook_id }, now);
    const body = bodyOf(d.payload);
    return { url: d.url, headers: signedHeaders({ id: d.id, at: now, body, secrets }), body: Buffer.from(body) };
  },
};

/** One pass over the event outbox (jobs/webhook-outbox.ts deliverDue). */
export const deliverDueEventWebhooks = (deps: EventWebhookDeps, limit?: number) => deliverDue(deps, EVENT_OUTBOX, limit);

/** The outbound role's loop over the event outbox. */
export const startEventWebhookDelivery = (deps: EventWebhookDeps): RunningOutbox => startOutboxDelivery(deps, EVENT_OUTBOX);
