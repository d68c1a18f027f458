// The delivery outcome's store in PostgreSQL: each decision about a send (record.ts) written in one transaction, its place in the delivery queue with it;
// deliveries of the same moment together, by group commit.
import type { Sql } from '../db/connection.js';
import { GroupCommit } from '../db/group-commit.js';
import { insertEvent, insertEvents } from '../engagement/events/queries.js';
import { noteRefusal } from '../engagement/analytics/esp-suppressions.js';
import type { Logger } from '../kernel/log.js';
import { releaseQuota } from '../limits/quota/usage.js';
import { deliveredAlready, markDelivered, setDeliveryStatus } from '../sending/outbound-log/delivery-queries.js';
import { dequeueDeliveries, rescheduleDelivery } from '../sending/outbound-log/delivery-queue.js';
import { insertAttempt } from '../sending/outbound-log/queries.js';
import { suppressRecipient } from './outcomes.js';
import type { Delivery, DeliveryOutcomeStore } from './record.js';

/**
 * The common outcome, delivered, is stored by group commit: the attempts, the sends' new status, their events and
 * their removal from the delivery queue, for every delivery that ended in the same moment, in one transaction.
 */
function deliveredWriter(sql: Sql, log: Logger): GroupCommit<Delivery, void> {
  return new GroupCommit<Delivery, void>(
    async (items, retry) => {
      await sql.begin(async (tx) => {
        // Retried alone after its batch failed: the batch may have committed (reply lost).
        if (retry && (await deliveredAlready(tx, items[0]!.attempt.send_id))) return;
        await markDelivered(tx, items);
        await insertEvents(
          tx,
          items.map((i) => i.event),
        );
        await dequeueDeliveries(
          tx,
          items.map((i) => i.attempt.send_id),
        );
      });
      return items.map(() => undefined);
    },
    log,
    'deliveries',
  );
}

export function postgresOutcomeStore(sql: Sql, log: Logger): DeliveryOutcomeStore {
  const delivered = deliveredWriter(sql, log);
  return {
    markDelivered: (delivery) => delivered.write(delivery),
    settle: async (o) => {
      await sql.begin(async (tx) => {
        if (o.attempt) await insertAttempt(tx, o.attempt);
        if (o.status) await setDeliveryStatus(tx, o.sendId, o.status);
        if (o.event) await insertEvent(tx, o.event);
        if (o.suppression) await suppressRecipient(tx, log, o.suppression.send, o.suppression, o.suppression.at);
        if (o.refusal) await noteRefusal(tx, o.refusal);
        if (o.quotaReleased) await releaseQuota(tx, o.quotaReleased.tenantId, o.quotaReleased.acceptedAt);
        if (o.queue === 'removed') await dequeueDeliveries(tx, [o.sendId]);
        else await rescheduleDelivery(tx, o.sendId, o.queue.dueAt);
      });
    },
  };
}
