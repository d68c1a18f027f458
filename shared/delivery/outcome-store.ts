// The delivery outcome's store in PostgreSQL: each decision about a send (record.ts) written in one transaction, its place in the delivery queue with it.
import type { Sql } from '../db/connection.js';
import { insertEvent } from '../engagement/events/queries.js';
import { noteRefusal } from '../engagement/analytics/esp-suppressions.js';
import type { Logger } from '../kernel/log.js';
import { releaseQuota } from '../limits/quota/usage.js';
import { setDeliveryStatus } from '../sending/outbound-log/delivery-queries.js';
import { dequeueDeliveries, rescheduleDelivery } from '../sending/outbound-log/delivery-queue.js';
import { insertAttempt } from '../sending/outbound-log/queries.js';
import { suppressRecipient } from './outcomes.js';
import type { DeliveryOutcomeStore } from './record.js';

export function postgresOutcomeStore(sql: Sql, log: Logger): DeliveryOutcomeStore {
  return {
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
