// Applies an unsubscribe of one send (its link's one-click POST, the page's button, or mail to its mailto address): the contact unsubscribed, or the address
// suppressed when the send has no contact; once only.
import { randomUUID } from 'node:crypto';
import type { Sql } from '../../db/connection.js';
import { AppError } from '../../kernel/errors.js';
import { suppress } from '../../audiences/suppressions/service.js';
import { addCampaignStats, insertEngagementEvents, lockTrackedSends, unsubscribeContact, type TrackedSend } from './queries.js';

/** How the person asked: RFC 8058 one-click (a mail client's POST), the page's button, or a mail to the mailto address. */
export type UnsubscribeMethod = 'one_click' | 'page' | 'mailto';

export interface UnsubscribeRequest {
  sendId: string;
  method: UnsubscribeMethod;
  at: Date;
  /** For the event: the client's User-Agent and truncated address (HTTP), or the stored mail (mailto). */
  detail?: Record<string, unknown>;
}

/**
 * unsubscribed: this request unsubscribed the contact (or suppressed the address) and recorded the event;
 * already: nothing left to do (unsubscribed or suppressed before, or the contact is deleted); nothing is recorded;
 * unknown_send: the token was good but the send is gone.
 */
export type UnsubscribeOutcome = { outcome: 'unsubscribed' | 'already'; send: TrackedSend } | { outcome: 'unknown_send' };

/**
 * In one transaction with the send locked (so two requests for one send, in any process, apply one after the
 * other): a campaign send's contact goes from active to unsubscribed (unsubscribed_at set), any other send's
 * address gets an 'unsubscribe' suppression of the send's tenant. Only a request that changed something
 * records the unsubscribe event and counts in the campaign's unsubscribes: the request is idempotent.
 */
export async function applyUnsubscribe(sql: Sql, request: UnsubscribeRequest): Promise<UnsubscribeOutcome> {
  return sql.begin(async (tx) => {
    const [send] = await lockTrackedSends(tx, [request.sendId]);
    if (!send) return { outcome: 'unknown_send' as const };
    // A proof goes to the sender's own people: its link shows the page a recipient would see and changes nothing.
    if (send.source === 'proof') return { outcome: 'already' as const, send };
    let changed: boolean;
    if (send.contact_id !== null) {
      changed = await unsubscribeContact(tx, send.tenant_id, send.contact_id, request.at);
    } else {
      changed = await suppress(tx, send.tenant_id, {
        email: send.to_email,
        reason: 'unsubscribe',
        source: 'unsubscribe-link',
        detail: request.method === 'mailto' ? 'mailto unsubscribe' : 'unsubscribe link',
        // As for bounces: the id of the send that caused it.
        messageId: send.id,
        at: request.at,
      }).catch((err: unknown) => {
        // Only an address the list cannot hold (checked before any SQL) gets here: nothing to suppress.
        if (err instanceof AppError) return false;
        throw err;
      });
    }
    if (!changed) return { outcome: 'already' as const, send };
    // The campaign's counters before the event (whose triggers lock its hourly counters and stale hours): the order
    // every writer of these rows takes them in (see the recorder), so none deadlocks another.
    if (send.campaign_id !== null) await addCampaignStats(tx, [{ campaign_id: send.campaign_id, variant: send.campaign_variant ?? '', unsubscribes: 1 }]);
    await insertEngagementEvents(tx, [
      {
        id: randomUUID(),
        tenant_id: send.tenant_id,
        type: 'unsubscribe',
        send_id: send.id,
        message_id: send.message_id,
        recipient: send.to_email,
        detail: { method: request.method, ...request.detail },
        occurred_at: request.at,
        campaign_id: send.campaign_id,
        contact_id: send.contact_id,
      },
    ]);
    return { outcome: 'unsubscribed' as const, send };
  });
}
