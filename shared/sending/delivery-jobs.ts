// The delivery jobs: one pg-boss job per send to deliver (job queue outbound.deliver), enqueued in the transaction that stores the send.
import { bossDb, createJobQueue, type Boss } from '../jobs/boss.js';
import type { Queryable, Sql } from '../db/connection.js';

export const DELIVERY_JOBS = 'outbound.deliver';

export interface DeliveryJob {
  send_id: string;
}

/**
 * Creates the job queue (idempotent). Retries here only cover a worker that died mid-job (its job
 * expires and runs again); SMTP outcomes are retried by the delivery code on the configured curve.
 */
export async function ensureDeliveryJobs(sql: Sql, options: { expireInSeconds: number }): Promise<void> {
  await createJobQueue(sql, DELIVERY_JOBS, { retryLimit: 1000, retryDelay: 30, expireInSeconds: options.expireInSeconds });
}

/** Enqueues a delivery inside `tx`: the job exists iff the transaction commits. */
export async function enqueueDelivery(boss: Boss, tx: Queryable, job: DeliveryJob, startAfter?: Date): Promise<void> {
  await boss.send(DELIVERY_JOBS, job, { db: bossDb(tx), ...(startAfter ? { startAfter } : {}) } as never);
}

/** Enqueues many deliveries inside `tx` in one statement. */
export async function enqueueDeliveries(boss: Boss, tx: Queryable, jobs: { job: DeliveryJob; startAfter?: Date | null }[]): Promise<void> {
  if (jobs.length === 0) return;
  await boss.insert(
    jobs.map((j) => ({ name: DELIVERY_JOBS, data: j.job, ...(j.startAfter ? { startAfter: j.startAfter } : {}) })),
    { db: bossDb(tx) } as never,
  );
}
