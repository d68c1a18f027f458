// Runs one campaign fan-out job: starts a scheduled campaign when its time comes, fixes the recipients, then claims and sends batches until none is left,
// the slice of time runs out, or the campaign must wait, pause, stop or fail.
import { performance } from 'node:perf_hooks';
import { AppError } from '../kernel/errors.js';
import { listCustomFields } from '../audiences/custom-fields/queries.js';
import type { SendingDeps } from '../sending/deps.js';
import { findTenantById } from '../accounts/tenants/queries.js';
import { sendBatch, type BatchContext, type FanoutStore } from './fanout-batch.js';
import { postgresFanoutStore } from './fanout-store.js';
import { enqueueFanout, enqueueSlot, type FanoutJob } from './fanout-jobs.js';
import { isQueryCanceled } from '../db/deadline.js';
import { materializeNextPage, segmentTooSlow, TargetGone } from './materialize.js';
import { campaignState, findCampaignById, setWaiting, transition, type CampaignRow } from './queries.js';
import { trackedContent } from './content.js';
import { campaignSender } from './default-sender.js';
import { checkSendable, loadContent } from './readiness.js';
import { sendSeedCopies } from './seed-copies.js';
import { wakeQuotaPaused } from './wake.js';
import { nextUtcMonth } from '../deliverability/warmup/tiers.js';

export type FanoutDeps = SendingDeps;

export interface FanoutControl {
  /** True once the process is shutting down: the run hands over to a continuation job after the batch in hand. */
  stopping(): boolean;
}

export type FanoutOutcome =
  | 'nothing' // not (or no longer) sending, or not yet due
  | 'continued' // the slice ran out with work left: a continuation job is queued
  | 'completed' // every recipient handled: sent
  | 'others' // what is left is claimed by other workers
  | 'waiting' // warm-up cap, suspended tenant, or the A/B winner
  | 'paused' // the monthly quota ran out, or its renders exceeded the render budget
  | 'failed'
  | 'cancelled';

const CANCEL_SWEEP = 5000;
/** Held recipients released at a time once the A/B winner is declared, in batches' worth. */
const HELD_CHUNK_BATCHES = 20;

async function fail(deps: FanoutDeps, row: CampaignRow, reason: string): Promise<'failed'> {
  const at = deps.clock.now();
  await transition(
    deps.sql,
    row.id,
    ['sending', 'scheduled'],
    'failed',
    { failure_reason: reason, finished_at: at, waiting_reason: null, waiting_until: null },
    at,
  );
  deps.log.warn({ campaignId: row.id, reason }, 'campaign failed');
  return 'failed';
}

/** A scheduled campaign whose time has come: checked again (it may no longer be sendable) and started. */
async function startScheduled(deps: FanoutDeps, row: CampaignRow, job: FanoutJob): Promise<CampaignRow | FanoutOutcome> {
  const now = deps.clock.now();
  if (!row.scheduled_at) return 'nothing';
  // Not due by this process's clock (a job from an earlier schedule, or clocks apart): wait for the stored time.
  if (row.scheduled_at.getTime() > now.getTime()) {
    await enqueueSlot(deps, deps.sql, job, row.scheduled_at);
    return 'nothing';
  }
  const mode = row.send_mode ?? 'live';
  try {
    await checkSendable(deps, row, mode);
  } catch (err) {
    if (err instanceof AppError) return fail(deps, row, `could not start at the scheduled time: ${err.message}`);
    throw err;
  }
  const change = { started_at: now, send_mode: mode, waiting_reason: null, waiting_until: null, failure_reason: null, target_cursor: null, targeted_at: null };
  // Only one of the campaign's jobs starts it; the others find it sending.
  return (await transition(deps.sql, row.id, ['scheduled'], 'sending', change, now)) ?? (await findCampaignById(deps.sql, row.id)) ?? 'nothing';
}

/** A campaign paused at the quota whose month is over: it goes on (not yet due by this clock: looked at again then). */
async function quotaReset(deps: FanoutDeps, row: CampaignRow, job: FanoutJob): Promise<CampaignRow | 'nothing'> {
  const now = deps.clock.now();
  if (!row.waiting_until) return 'nothing';
  if (row.waiting_until.getTime() > now.getTime()) {
    await enqueueSlot(deps, deps.sql, job, row.waiting_until);
    return 'nothing';
  }
  const woken = await deps.sql.begin((tx) => wakeQuotaPaused(deps, tx, { campaignId: row.id, dueBy: now }, now));
  if (woken.length > 0) deps.log.info({ campaignId: row.id }, 'campaign goes on: the monthly quota was reset');
  return (await findCampaignById(deps.sql, row.id)) ?? 'nothing';
}

/** After a cancel: unsent recipients become skipped 'cancelled' (batches a live claim holds are left to their worker, which completes them). */
async function sweepCancel(deps: FanoutDeps, store: FanoutStore, row: CampaignRow, job: FanoutJob): Promise<'cancelled'> {
  while ((await store.sweepCancelled(row.id, deps.clock.now(), CANCEL_SWEEP)) > 0);
  const left = await store.fanoutLeft(row.id, deps.clock.now());
  // A worker holds a batch: if it dies, its claim ends then and the batch is swept.
  if (left.claimedUntil) await enqueueSlot(deps, deps.sql, job, new Date(left.claimedUntil.getTime() + 1000));
  return 'cancelled';
}

/** What a run reads once: the tenant, the parsed content and the custom-field catalog. */
async function batchContext(deps: FanoutDeps, row: CampaignRow): Promise<BatchContext | string> {
  const tenant = await findTenantById(deps.sql, row.tenant_id);
  if (!tenant) return 'the tenant is gone';
  let content;
  try {
    content = await loadContent(deps.sql, row);
  } catch (err) {
    if (err instanceof AppError) return `its content cannot be sent: ${err.message}`;
    throw err;
  }
  let sender;
  try {
    // Resolved once per run: a default sender changed meanwhile applies from the next run on.
    sender = await campaignSender(deps.sql, row, row.send_mode ?? 'live');
  } catch (err) {
    if (err instanceof AppError) return err.message;
    throw err;
  }
  return {
    campaign: row,
    sender,
    // The tracking of body_html planned once for the run, when Liquid cannot change the links (content.ts).
    content: trackedContent(content, row, { publicUrl: deps.config.publicUrl }),
    tenant: { id: tenant.id, status: tenant.status, is_sandbox: tenant.is_sandbox },
    mode: row.send_mode ?? 'live',
    catalog: await listCustomFields(deps.sql, row.tenant_id),
  };
}

/** No batch could be claimed: the campaign is sent, waits for its A/B winner, or others are finishing it. */
async function finishOrWait(deps: FanoutDeps, store: FanoutStore, row: CampaignRow, job: FanoutJob): Promise<FanoutOutcome> {
  const now = deps.clock.now();
  const left = await store.fanoutLeft(row.id, now);
  if (left.unclaimed || left.orphaned || left.claimedUntil) {
    // Claimed by other workers (or a batch another worker was taking at this instant): look again when their claims
    // end, in case one died.
    await enqueueSlot(deps, deps.sql, job, new Date((left.claimedUntil ?? now).getTime() + 1000));
    return 'others';
  }
  if (left.held) {
    if (row.ab_winner !== null) {
      // The winner is declared and another worker is releasing the last held rows: look again shortly.
      await enqueueSlot(deps, deps.sql, job, new Date(now.getTime() + 1000));
      return 'others';
    }
    await setWaiting(deps.sql, row.id, 'ab_winner', null, now);
    return 'waiting';
  }
  const sent = await transition(deps.sql, row.id, ['sending'], 'sent', { finished_at: now, waiting_reason: null, waiting_until: null }, now);
  if (sent) deps.log.info({ campaignId: row.id }, 'campaign sent');
  return 'completed';
}

/**
 * Runs (or resumes) a campaign's fan-out for one job. Restart-safe: a recipient is done iff its send exists, pages
 * commit with their counters, a batch is counted when it is completed, and claims of a dead worker expire; so a rerun
 * neither loses nor repeats anyone. Pause and cancel take effect between batches.
 */
export async function runFanout(
  deps: FanoutDeps,
  job: FanoutJob,
  control: FanoutControl = { stopping: () => false },
  store: FanoutStore = postgresFanoutStore(deps),
): Promise<FanoutOutcome> {
  const f = deps.config.campaigns.fanout;
  const sliceEnds = performance.now() + f.slice_seconds * 1000;
  const outOfTime = () => control.stopping() || performance.now() >= sliceEnds;
  const continueLater = async (): Promise<'continued'> => {
    await enqueueSlot(deps, deps.sql, job);
    return 'continued';
  };

  let found = await findCampaignById(deps.sql, job.campaign_id);
  if (!found) return 'nothing';
  if (found.status === 'paused' && found.waiting_reason === 'quota_exceeded') {
    const resumed = await quotaReset(deps, found, job);
    if (typeof resumed === 'string') return resumed;
    found = resumed;
  }
  if (found.status === 'scheduled') {
    const started = await startScheduled(deps, found, job);
    if (typeof started === 'string') return started;
    found = started;
  }
  let row: CampaignRow = found;
  if (row.status === 'cancelled') return sweepCancel(deps, store, row, job);
  if (row.status !== 'sending') return 'nothing';

  while (!row.targeted_at) {
    let step;
    try {
      step = await materializeNextPage(deps, row.id);
    } catch (err) {
      if (err instanceof TargetGone) return fail(deps, row, err.message);
      // Retrying would run the same rule set into the same deadline: the campaign stops, and says why.
      if (isQueryCanceled(err)) return fail(deps, row, segmentTooSlow(deps.config.queries.deadlines_ms.segment_materialize));
      throw err;
    }
    if (step === 'not_sending') return 'nothing';
    if (step === 'done') break;
    if (outOfTime()) return continueLater();
  }

  const ctx = await batchContext(deps, row);
  if (typeof ctx === 'string') return fail(deps, row, ctx);
  const log = deps.log.child({ campaignId: row.id, slot: job.slot });
  // The seed mailboxes' copies go first, each run (a copy held at the warm-up cap is tried again by the next).
  await sendSeedCopies(deps, ctx);
  for (;;) {
    const state = await campaignState(deps.sql, row.id);
    if (!state) return 'nothing';
    // The winner may have been declared since the run began (the remainder's subject depends on it).
    row = { ...row, ...state };
    if (row.status === 'cancelled') return sweepCancel(deps, store, row, job);
    if (row.status !== 'sending') return 'nothing';
    ctx.campaign = row;
    if (outOfTime()) return continueLater();
    // Where this process delivers too, a batch waits for room at its workers: its sends then go to them with their
    // bytes, instead of through the queue (read back from the database) or piling up in memory.
    await deps.local.whenRoom(f.batch_size);
    const now = deps.clock.now();
    const batch = await store.claimBatch(row.id, f.batch_size, now, new Date(now.getTime() + f.claim_lease_seconds * 1000));
    if (!batch) {
      // A declared A/B winner: its remainder is released chunk by chunk (POST /ab/finalize released the first).
      if (row.ab_winner !== null && (await store.releaseHeld(row.id, f.batch_size * HELD_CHUNK_BATCHES)) > 0) continue;
      return finishOrWait(deps, store, row, job);
    }
    if (row.waiting_reason !== null) await setWaiting(deps.sql, row.id, null, null, now);
    // Read for every batch: a suspension (or the sandbox) applies from the next batch on.
    const tenant = await findTenantById(deps.sql, row.tenant_id);
    if (tenant) ctx.tenant = { id: tenant.id, status: tenant.status, is_sandbox: tenant.is_sandbox };
    const result = await sendBatch(deps, store, ctx, batch);
    log.info(
      { first: batch.firstSeq, last: batch.lastSeq, queued: result.queued, skipped: result.skipped, released: result.released, pid: process.pid },
      'campaign batch',
    );
    if (result.failure) return fail(deps, row, `its From address cannot send: ${result.failure}`);
    if (result.overBudget) {
      // The tenant's templates cost more than a batch may: paused with the reason, until the tenant resumes it.
      const at = deps.clock.now();
      await transition(
        deps.sql,
        row.id,
        ['sending'],
        'paused',
        { paused_at: at, waiting_reason: 'render_budget', waiting_until: null, paused_reason: result.overBudget },
        at,
      );
      log.warn({ reason: result.overBudget }, 'campaign paused: its renders exceeded the render budget');
      return 'paused';
    }
    if (result.refusal?.reason === 'quota_exceeded') {
      const at = deps.clock.now();
      // The quota counts again from the next UTC month: the campaign goes on by itself then (or at a plan change).
      const until = nextUtcMonth(at);
      await deps.sql.begin(async (tx) => {
        const paused = await transition(tx, row.id, ['sending'], 'paused', { paused_at: at, waiting_reason: 'quota_exceeded', waiting_until: until }, at);
        if (paused) await enqueueFanout(deps, tx, row.id, until);
      });
      log.warn({ used: result.refusal.used, cap: result.refusal.cap, until }, 'campaign paused: the monthly send cap is reached');
      return 'paused';
    }
    if (result.refusal?.reason === 'tenant_suspended') {
      const until = new Date(deps.clock.now().getTime() + f.suspended_recheck_seconds * 1000);
      await setWaiting(deps.sql, row.id, 'tenant_suspended', until, deps.clock.now());
      await enqueueSlot(deps, deps.sql, job, until);
      return 'waiting';
    }
    if (result.heldUntil) {
      // The warm-up cap of the day is used up: every slot starts again when the next window opens.
      const until = result.heldUntil;
      await deps.sql.begin(async (tx) => {
        await setWaiting(tx, row.id, 'warmup_cap', until, deps.clock.now());
        await enqueueFanout(deps, tx, row.id, until);
      });
      log.info({ until }, 'campaign waits for the next warm-up window');
      return 'waiting';
    }
  }
}
