// The delivery outcome's store in memory, for the rules' tests without PostgreSQL: what PostgreSQL keeps of a send's delivery (its status, attempts,
// events, place in the delivery queue, its tenant's suppressions, refusals and quota), kept in maps and applied whole per call, as one transaction would.
import type { NewEvent } from '../../shared/engagement/events/queries.js';
import type { Refusal } from '../../shared/engagement/analytics/esp-suppressions.js';
import type { Delivery, DeliveryOutcomeStore, SendOutcome } from '../../shared/delivery/record.js';
import type { StatusChange } from '../../shared/sending/outbound-log/delivery-queries.js';
import type { AttemptRow } from '../../shared/sending/outbound-log/queries.js';

export class MemoryOutcomeStore implements DeliveryOutcomeStore {
  readonly statuses = new Map<string, StatusChange>();
  readonly attempts: Omit<AttemptRow, 'id'>[] = [];
  readonly events: NewEvent[] = [];
  /** Sends in the delivery queue and when each is due. */
  readonly queue = new Map<string, Date>();
  /** Suppressed addresses per tenant, with the id of the send that caused each. */
  readonly suppressions = new Map<string, Map<string, string>>();
  readonly refusals: Refusal[] = [];
  /** Quota given back, per tenant. */
  readonly quotaReleased = new Map<string, number>();

  /** A send waiting in the delivery queue, due at `dueAt`. */
  enqueue(sendId: string, dueAt: Date): void {
    this.queue.set(sendId, dueAt);
  }

  async markDelivered(d: Delivery): Promise<void> {
    await this.settle({
      sendId: d.attempt.send_id,
      attempt: d.attempt,
      status: { status: 'delivered', at: d.attempt.attempted_at, detail: d.detail },
      event: d.event,
      queue: 'removed',
    });
  }

  async settle(o: SendOutcome): Promise<void> {
    if (o.attempt) this.attempts.push(o.attempt);
    if (o.status) this.statuses.set(o.sendId, o.status);
    if (o.event) this.events.push(o.event);
    if (o.suppression) {
      const list = this.suppressions.get(o.suppression.send.tenant_id) ?? new Map<string, string>();
      list.set(o.suppression.send.to_email.toLowerCase(), o.suppression.send.id);
      this.suppressions.set(o.suppression.send.tenant_id, list);
    }
    if (o.refusal) this.refusals.push(o.refusal);
    if (o.quotaReleased) this.quotaReleased.set(o.quotaReleased.tenantId, (this.quotaReleased.get(o.quotaReleased.tenantId) ?? 0) + 1);
    if (o.queue === 'removed') this.queue.delete(o.sendId);
    else this.queue.set(o.sendId, o.queue.dueAt);
  }

  isSuppressed(tenantId: string, email: string): boolean {
    return this.suppressions.get(tenantId)?.has(email.toLowerCase()) ?? false;
  }
}
