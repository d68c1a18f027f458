// The campaign fan-out job queue (campaign-fanout): jobs per campaign and slot, enqueued inside the caller's transaction, with singleton keys so a campaign
// never piles up jobs.
import type { Config } from '../config/index.js';
import type { Queryable, Sql } from '../db/connection.js';
import { bossDb, createJobQueue, type Boss } from '../jobs/boss.js';

export const FANOUT_JOBS = 'campaign-fanout';

export interface FanoutJob {
  campaign_id: string;
  /** Which of the campaign's parallel jobs this is (0 .. fanout.parallel_jobs - 1). */
  slot: number;
}

/** What enqueueing needs: the process's queues and the fan-out settings. */
export interface FanoutQueueDeps {
  boss: Boss;
  config: Pick<Config, 'campaigns'>;
}

/**
 * Creates the queue (idempotent). Policy `short`: at most one queued (not yet started) job per singleton key, so
 * however often a campaign is nudged (send, resume, finalize, a restart) each slot waits in the queue at most once.
 * A job that fails (the database went away) runs again; one still active after job_expire_seconds belonged to a
 * dead process and runs again (nothing is sent twice: a recipient is done iff its send exists).
 */
export async function ensureFanoutJobs(sql: Sql, boss: Boss, config: Pick<Config, 'campaigns'>): Promise<void> {
  const queue = { policy: 'short' as const, retryLimit: 20, retryDelay: 5, retryBackoff: true, expireInSeconds: config.campaigns.fanout.job_expire_seconds };
  await createJobQueue(sql, FANOUT_JOBS, queue);
  await boss.updateQueue(FANOUT_JOBS, { name: FANOUT_JOBS, ...queue });
}

/**
 * The singleton key of a slot's job: one for "as soon as possible", and one per instant for a timed job (the next
 * warm-up window, a scheduled start, a recheck), so a job waiting for tomorrow never keeps an earlier one out.
 */
const keyOf = (campaignId: string, slot: number, startAfter: Date | undefined) =>
  startAfter ? `${campaignId}:${slot}:${startAfter.toISOString()}` : `${campaignId}:${slot}`;

/**
 * Enqueues the campaign's fan-out jobs (one per slot) inside `db`: they exist iff the caller's transaction commits.
 * Without `startAfter` they run as soon as a worker is free; with it, not before.
 */
export async function enqueueFanout(deps: FanoutQueueDeps, db: Queryable, campaignId: string, startAfter?: Date): Promise<void> {
  // One job at a time: pg-boss skips a job whose singleton is already queued (ON CONFLICT DO NOTHING).
  for (let slot = 0; slot < deps.config.campaigns.fanout.parallel_jobs; slot++) await enqueueSlot(deps, db, { campaign_id: campaignId, slot }, startAfter);
}

/** Enqueues one slot's continuation (a job whose slice of time ran out with work left). */
export async function enqueueSlot(deps: FanoutQueueDeps, db: Queryable, job: FanoutJob, startAfter?: Date): Promise<void> {
  await deps.boss.send(FANOUT_JOBS, job, {
    db: bossDb(db),
    singletonKey: keyOf(job.campaign_id, job.slot, startAfter),
    ...(startAfter ? { startAfter } : {}),
  } as never);
}
