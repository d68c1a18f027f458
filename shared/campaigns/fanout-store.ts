// The campaign fan-out's store in PostgreSQL: the batch SQL of batch-queries.ts (each statement or transaction as it is there), the held A/B remainder's
// release, and the send use-case for a recipient's message.
import { acceptSend } from '../sending/accept.js';
import type { SendingDeps } from '../sending/deps.js';
import { batchRecipients, claimBatch, fanoutLeft, finishBatch, sweepCancelled } from './batch-queries.js';
import type { FanoutStore } from './fanout-batch.js';
import { releaseHeld } from './stats-queries.js';

export function postgresFanoutStore(deps: SendingDeps): FanoutStore {
  const { sql } = deps;
  return {
    claimBatch: (campaignId, size, now, leaseUntil) => claimBatch(sql, campaignId, size, now, leaseUntil),
    recipientsOf: (batch, tenantId) => batchRecipients(sql, batch, tenantId),
    send: (input) => acceptSend(deps, input),
    finishBatch: (batch, outcome) => finishBatch(sql, batch, outcome),
    releaseHeld: (campaignId, limit) => releaseHeld(sql, campaignId, limit),
    fanoutLeft: (campaignId, now) => fanoutLeft(sql, campaignId, now),
    sweepCancelled: (campaignId, now, limit) => sweepCancelled(sql, campaignId, now, limit),
  };
}
