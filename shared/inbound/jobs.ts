// The inbound follow-up queues: what the MX enqueues, in the transaction that stores a message, for the workers that hand it on (bounce and
// unsubscribe mail; webhook deliveries are rows of their own outbox, shared/webhooks/outbox.ts).
import { bossDb, createJobQueue, type Boss } from '../jobs/boss.js';
import type { Queryable, Sql } from '../db/connection.js';

/** One job per inbound_recipients row of kind 'bounce': parse the DSN or ARF report and map it to its send. */
export const INBOUND_BOUNCE_JOBS = 'inbound.bounce';
/** One job per inbound_recipients row of kind 'unsubscribe': apply the mailto unsubscribe (shared/engagement/tracking/unsubscribe-mail.ts). */
export const INBOUND_UNSUBSCRIBE_JOBS = 'inbound.unsubscribe';

export interface InboundBounceJob {
  recipient_id: string;
}

export interface InboundUnsubscribeJob {
  recipient_id: string;
}

/** Creates the queues (idempotent). */
export async function ensureInboundJobs(sql: Sql, options: { expireInSeconds: number }): Promise<void> {
  await createJobQueue(sql, INBOUND_BOUNCE_JOBS, { retryLimit: 20, retryDelay: 30, retryBackoff: true, expireInSeconds: options.expireInSeconds });
  await createJobQueue(sql, INBOUND_UNSUBSCRIBE_JOBS, { retryLimit: 20, retryDelay: 30, retryBackoff: true, expireInSeconds: options.expireInSeconds });
}

/** Enqueues follow-up jobs inside `tx`: they exist iff the transaction commits. */
export async function enqueueInboundJobs(
  boss: Boss,
  tx: Queryable,
  jobs: { bounce: InboundBounceJob[]; unsubscribe?: InboundUnsubscribeJob[] },
): Promise<void> {
  const rows = [
    ...jobs.bounce.map((data) => ({ name: INBOUND_BOUNCE_JOBS, data })),
    ...(jobs.unsubscribe ?? []).map((data) => ({ name: INBOUND_UNSUBSCRIBE_JOBS, data })),
  ];
  if (rows.length === 0) return;
  await boss.insert(rows, { db: bossDb(tx) } as never);
}
