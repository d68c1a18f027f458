// The inbound follow-up queues: what the MX enqueues, in the transaction that stores a message, for the workers that hand it on (webhook, bounce and
// unsubscribe mail).
import { bossDb, createJobQueue, type Boss } from '../jobs/boss.js';
import type { Queryable, Sql } from '../db/connection.js';

/** One job per inbound_webhook_deliveries row: POST the message to the tenant's webhook. */
export const INBOUND_WEBHOOK_JOBS = 'inbound.webhook';
/** One job per inbound_recipients row of kind 'bounce': parse the DSN or ARF report and map it to its send. */
export const INBOUND_BOUNCE_JOBS = 'inbound.bounce';
/** One job per inbound_recipients row of kind 'unsubscribe': apply the mailto unsubscribe (shared/engagement/tracking/unsubscribe-mail.ts). */
export const INBOUND_UNSUBSCRIBE_JOBS = 'inbound.unsubscribe';

export interface InboundWebhookJob {
  delivery_id: string;
}

export interface InboundBounceJob {
  recipient_id: string;
}

export interface InboundUnsubscribeJob {
  recipient_id: string;
}

/**
 * Creates the queues (idempotent). pg-boss retries here only cover a worker that died mid-job;
 * the webhook's own schedule (30 s … 24 h, 7 attempts) is kept by the webhook worker.
 */
export async function ensureInboundJobs(sql: Sql, options: { expireInSeconds: number }): Promise<void> {
  await createJobQueue(sql, INBOUND_WEBHOOK_JOBS, { retryLimit: 1000, retryDelay: 30, expireInSeconds: options.expireInSeconds });
  await createJobQueue(sql, INBOUND_BOUNCE_JOBS, { retryLimit: 20, retryDelay: 30, retryBackoff: true, expireInSeconds: options.expireInSeconds });
  await createJobQueue(sql, INBOUND_UNSUBSCRIBE_JOBS, { retryLimit: 20, retryDelay: 30, retryBackoff: true, expireInSeconds: options.expireInSeconds });
}

/** Enqueues follow-up jobs inside `tx`: they exist iff the transaction commits. */
export async function enqueueInboundJobs(
  boss: Boss,
  tx: Queryable,
  jobs: { webhook: InboundWebhookJob[]; bounce: InboundBounceJob[]; unsubscribe?: InboundUnsubscribeJob[] },
  startAfter?: Date,
): Promise<void> {
  const rows = [
    ...jobs.webhook.map((data) => ({ name: INBOUND_WEBHOOK_JOBS, data, ...(startAfter ? { startAfter } : {}) })),
    ...jobs.bounce.map((data) => ({ name: INBOUND_BOUNCE_JOBS, data, ...(startAfter ? { startAfter } : {}) })),
    ...(jobs.unsubscribe ?? []).map((data) => ({ name: INBOUND_UNSUBSCRIBE_JOBS, data, ...(startAfter ? { startAfter } : {}) })),
  ];
  if (rows.length === 0) return;
  await boss.insert(rows, { db: bossDb(tx) } as never);
}
