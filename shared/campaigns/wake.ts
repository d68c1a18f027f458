// Wakes the campaigns that wait on a limit an operator (or the calendar) just lifted: the warm-up cap after a tier rise or a domain's resume, the monthly quota
// after a plan change or the month's reset; each in the caller's transaction, with its fan-out queued to run at once.
import type { Queryable } from '../db/connection.js';
import { enqueueFanout, type FanoutQueueDeps } from './fanout-jobs.js';

/**
 * The tenant's sending campaigns waiting for the next warm-up window (waiting_reason warmup_cap) go on now: their
 * wake-up time is cleared and a fan-out job queued for as soon as a worker is free (the job queued for the window
 * stays, and finds nothing or little to do). Tenant-wide rather than per domain: a campaign of another domain still at
 * its cap only looks once and waits again. Returns the ids woken.
 */
export async function wakeWarmupWaiters(deps: FanoutQueueDeps, db: Queryable, tenantId: string, at: Date): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    update campaigns set waiting_until = null, updated_at = ${at}
    where tenant_id = ${tenantId} and status = 'sending' and waiting_reason = 'warmup_cap'
    returning id`;
  for (const r of rows) await enqueueFanout(deps, db, r.id);
  return rows.map((r) => r.id);
}

/**
 * Campaigns the fan-out paused at the monthly quota (status paused, waiting_reason quota_exceeded; a caller's pause
 * has no waiting_reason and is never touched) go back to sending, as POST /resume would, and their fan-out is queued.
 * Either all of a tenant's (its plan changed) or one whose waiting_until, the start of the next UTC month, has come.
 */
export async function wakeQuotaPaused(
  deps: FanoutQueueDeps,
  db: Queryable,
  which: { tenantId: string } | { campaignId: string; dueBy: Date },
  at: Date,
): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    update campaigns set status = 'sending', waiting_reason = null, waiting_until = null, paused_reason = null, updated_at = ${at}
    where status = 'paused' and waiting_reason = 'quota_exceeded'
      and ${'tenantId' in which ? db`tenant_id = ${which.tenantId}` : db`id = ${which.campaignId} and waiting_until <= ${which.dueBy}`}
    returning id`;
  for (const r of rows) await enqueueFanout(deps, db, r.id);
  return rows.map((r) => r.id);
}
