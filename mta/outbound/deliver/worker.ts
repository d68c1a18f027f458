// The delivery job handler: load the send, skip what must not leave, re-check a deferred send at wake-up, deliver once, and store the outcome.
import { performance } from 'node:perf_hooks';
import type { Job } from 'pg-boss';
import { isUuid } from '../../../shared/ids.js';
import { claimForDelivery, loadDeliverySend, type DeliverySend } from '../../../shared/sends/delivery-queries.js';
import { gateDepsOf, type SendingDeps } from '../../../shared/sending/deps.js';
import type { GateSend } from '../../../shared/sending/gates/types.js';
import { warmupGate } from '../../../shared/sending/gates/warmup.js';
import type { DeliveryJob } from '../../../shared/sending/delivery-jobs.js';
import type { IpWatchdog } from '../../../shared/ip-pools/watchdog.js';
import { logAttempt } from './attempt-log.js';
import { attemptFromPool } from './source.js';
import { recordAttempt, recordDrop, recordFailure, recordRedeferral, recordSimulated, type DeliveredWriter, type JobRef, type RecordedOutcome } from './record.js';
import type { Transports } from './transports.js';

export type DeliveryJobOutcome = 'skipped' | 'attempted' | 'dropped' | 'simulated' | 'redeferred' | 'failed';

/** Thrown when another worker holds the send: the job fails and pg-boss tries it again later. */
export class SendBusyError extends Error {
  override name = 'SendBusyError';
}

// Only these may (still) be delivered; 'sending' is one a dead worker left behind.
const DELIVERABLE = new Set(['queued', 'deferred', 'sending']);

/** What delivery takes from the process's services: the send path's look-ups and counters for the wake-up's warm-up gate. */
export type DeliveryDeps = Pick<SendingDeps, 'sql' | 'boss' | 'config' | 'clock' | 'log' | 'dns' | 'lookups' | 'counters' | 'espHolds' | 'metrics'>;

export interface WorkerContext {
  deps: DeliveryDeps;
  transports: Transports;
  delivered: DeliveredWriter;
  /** The process's IP pools and watchdog: which address a delivery goes out from. */
  watchdog: IpWatchdog;
}

/**
 * Runs one delivery job to its end. SMTP and DNS outcomes are stored, never thrown; a throw
 * means the job itself could not be handled (database down, send busy) and should run again.
 */
export async function runDeliveryJob(ctx: WorkerContext, job: Pick<Job<DeliveryJob>, 'id' | 'data'>, signal: AbortSignal): Promise<DeliveryJobOutcome> {
  const { deps } = ctx;
  const sendId: unknown = job.data?.send_id;
  // A malformed job names no send; retrying it would only fail the same way.
  if (typeof sendId !== 'string' || !isUuid(sendId)) return 'skipped';
  const send = await loadDeliverySend(deps.sql, sendId);
  if (!send || !DELIVERABLE.has(send.status)) return 'skipped';
  if (send.mode !== 'live') {
    // A test-key message never leaves the MTA, whatever its status says.
    deps.log.error({ sendId: send.id, status: send.status }, 'a test-mode send reached the delivery queue; not delivered');
    return 'skipped';
  }
  const held = await holdBack(ctx, send, job);
  if (held !== undefined) return held;
  let counted: GateSend | undefined;
  if (send.status === 'deferred') {
    const woken = await wakeUp(ctx, send, job);
    if (typeof woken === 'string') return woken;
    counted = woken;
  }
  const at = deps.clock.now();
  const staleBefore = new Date(at.getTime() - deps.config.delivery.workers.job_expire_seconds * 1000);
  const claim = await claimForDelivery(deps.sql, send.id, { at, staleBefore });
  if (!claim) {
    // Another worker has it: the warm-up count this wake-up took is that worker's to take.
    if (counted) await warmupGate.undo!(gateDepsOf(deps), counted);
    const now = await loadDeliverySend(deps.sql, send.id);
    if (now?.status === 'sending') throw new SendBusyError(`send ${send.id} is being delivered by another worker`);
    return 'skipped';
  }
  return deliverClaimed(ctx, send, claim.message, job, signal);
}

/** Delivers a send this worker has claimed (marked `sending`) and stores the outcome. */
export async function deliverClaimed(
  ctx: WorkerContext,
  send: DeliverySend,
  message: Buffer | null,
  job: Pick<Job<DeliveryJob>, 'id'>,
  signal: AbortSignal,
): Promise<DeliveryJobOutcome> {
  const { deps } = ctx;
  const at = deps.clock.now();
  if (!message) {
    await recordFailure(deps, send, job, { at, detail: 'no message is stored for this send: nothing to deliver' });
    return 'failed';
  }
  const started = performance.now();
  const { result, classification, sourceAddress } = await attemptFromPool(
    {
      dns: deps.dns,
      transports: ctx.transports,
      relay: deps.config.outboundRelay,
      port: deps.config.outboundPort,
      watchdog: ctx.watchdog,
      bounceRules: deps.config.bounceRules,
    },
    send,
    message,
    signal,
  );
  const durationMs = performance.now() - started;
  const recorded = await recordAttempt(deps, send, job, { result, classification, at, durationMs, sourceAddress }, ctx.delivered);
  logAttempt(deps.log, { send, remoteHost: result.remoteHost, sourceAddress, classification, recorded, at, durationMs });
  countAttempt(deps, send, recorded, at.getTime() + durationMs);
  return 'attempted';
}

/**
 * What changed since acceptance, as the gates would judge it now: a tenant suspended meanwhile
 * sends nothing more (dropped), one put in the sandbox has its mail intercepted (simulated), a
 * recipient suppressed meanwhile is dropped. Undefined: go on.
 */
async function holdBack(ctx: WorkerContext, send: DeliverySend, job: JobRef): Promise<DeliveryJobOutcome | undefined> {
  const { deps } = ctx;
  const at = deps.clock.now();
  if (send.tenant_status === 'suspended') {
    await recordDrop(deps, send, job, { at, reason: 'tenant_suspended', gate: 'suspended', detail: 'dropped before delivery: the tenant is suspended' });
    return 'dropped';
  }
  if (send.tenant_is_sandbox) {
    await recordSimulated(deps, send, job, at);
    return 'simulated';
  }
  if (await deps.lookups.isSuppressed(send.tenant_id, send.to_email)) {
    await recordDrop(deps, send, job, { at, reason: 'suppressed', gate: 'suppression', detail: 'dropped before delivery: the recipient is suppressed' });
    return 'dropped';
  }
  return undefined;
}

/**
 * A deferred send's wake-up: a warm-up deferral (one before any attempt) passes the warm-up gate
 * again, which counts it for the new day (the quota counted it at acceptance). An outcome string
 * ends the job; otherwise deliver now, the GateSend returned saying the warm-up gate counted it.
 */
async function wakeUp(ctx: WorkerContext, send: DeliverySend, job: JobRef): Promise<DeliveryJobOutcome | GateSend | undefined> {
  const { deps } = ctx;
  const at = deps.clock.now();
  if (send.attempts > 0) return undefined;
  if (send.domain_id === null) {
    await recordDrop(deps, send, job, { at, reason: 'domain_removed', gate: 'warmup', detail: 'dropped at wake-up: its sending domain was removed' });
    return 'dropped';
  }
  const gateSend: GateSend = {
    tenant: { id: send.tenant_id, status: send.tenant_status, is_sandbox: send.tenant_is_sandbox },
    mode: send.mode,
    to: send.to_email,
    domainId: send.domain_id,
    at,
  };
  const decision = await warmupGate.decide(gateDepsOf(deps), gateSend);
  switch (decision.outcome) {
    case 'defer':
      await recordRedeferral(deps, send, job, { at, until: decision.until, detail: decision.detail ?? {} });
      return 'redeferred';
    case 'drop':
      await recordDrop(deps, send, job, { at, reason: 'suppressed', gate: 'warmup', detail: 'dropped at wake-up: the recipient is suppressed' });
      return 'dropped';
    default:
      return gateSend;
  }
}

/** The attempt's outcome in the metrics; a delivery also gives its latency since acceptance (retries included). */
function countAttempt(deps: DeliveryDeps, send: DeliverySend, recorded: RecordedOutcome, doneAtMs: number): void {
  const metrics = deps.metrics;
  if (!metrics) return;
  metrics.messages.inc({ outcome: recorded.outcome });
  if (recorded.outcome === 'delivered') metrics.deliveryLatency.observe(Math.max(0, doneAtMs - send.created_at.getTime()) / 1000);
}
