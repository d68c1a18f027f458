// Delivering one claimed send: skip what must not leave, re-check a deferred send at wake-up, deliver once, and store the outcome (which takes it out of the
// delivery queue or reschedules it).
import { performance } from 'node:perf_hooks';
import type { DeliverySend } from '../../../shared/sending/outbound-log/delivery-queries.js';
import { gateDepsOf, type SendingDeps } from '../../../shared/sending/deps.js';
import { DELIVERY_GATES, runGates } from '../../../shared/sending/gates/pipeline.js';
import type { GateDeps, GateSend } from '../../../shared/sending/gates/types.js';
import { warmupGate } from '../../../shared/sending/gates/warmup.js';
import type { IpWatchdog } from '../../../shared/delivery/ip-pools/watchdog.js';
import { logAttempt } from './attempt-log.js';
import { attemptFromPool } from './source.js';
import {
  recordAttempt,
  recordDrop,
  recordFailure,
  recordGone,
  recordRedeferral,
  recordSimulated,
  type DeliveryOutcomeStore,
  type RecordedOutcome,
} from '../../../shared/delivery/record.js';
import type { Transports } from './transports.js';

export type DeliveryOutcome = 'skipped' | 'attempted' | 'dropped' | 'simulated' | 'redeferred' | 'failed';

// Only these may (still) be delivered; 'sending' is a send an earlier version of Mailpath was delivering.
const DELIVERABLE = new Set(['queued', 'deferred', 'sending']);

/** What delivery takes from the process's services: the send path's look-ups and counters for the wake-up's warm-up gate. */
export type DeliveryDeps = Pick<SendingDeps, 'sql' | 'config' | 'clock' | 'log' | 'dns' | 'lookups' | 'counters' | 'espHolds' | 'metrics' | 'local'>;

export interface WorkerContext {
  deps: DeliveryDeps;
  transports: Transports;
  /** Where the outcomes are stored (shared/delivery/outcome-store.ts: PostgreSQL). */
  outcomes: DeliveryOutcomeStore;
  /** The process's IP pools and watchdog: which address a delivery goes out from. */
  watchdog: IpWatchdog;
}

/** A send a worker claimed from the delivery queue, as loaded with its message. */
export type ClaimedSend = DeliverySend & { message: Buffer | null; suppressed: boolean };

/**
 * Runs a send claimed from the queue to its end. SMTP and DNS outcomes are stored, never thrown; a throw means the
 * send could not be handled (the database went away): its claim runs out and a worker takes it again.
 */
export async function deliverQueued(ctx: WorkerContext, send: ClaimedSend, signal: AbortSignal): Promise<DeliveryOutcome> {
  const { deps } = ctx;
  if (!DELIVERABLE.has(send.status)) {
    // Delivered, bounced or dropped already (a queue row left by a crash between the outcome and its removal).
    await recordGone(ctx, send.id);
    return 'skipped';
  }
  if (send.mode !== 'live') {
    // A test-key message never leaves the MTA, whatever its status says.
    deps.log.error({ sendId: send.id, status: send.status }, 'a test-mode send reached the delivery queue; not delivered');
    await recordGone(ctx, send.id);
    return 'skipped';
  }
  const held = await holdBack(ctx, send);
  if (held !== undefined) return held;
  if (send.status === 'deferred') {
    const woken = await wakeUp(ctx, send);
    if (woken !== undefined) return woken;
  }
  return deliverClaimed(ctx, send, send.message, signal);
}

/** Delivers a send this worker holds (claimed from the queue, or handed over at acceptance) and stores the outcome. */
export async function deliverClaimed(ctx: WorkerContext, send: DeliverySend, message: Buffer | null, signal: AbortSignal): Promise<DeliveryOutcome> {
  const { deps } = ctx;
  const at = deps.clock.now();
  if (!message) {
    await recordFailure(ctx, send, { at, detail: 'no message is stored for this send: nothing to deliver' });
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
  const recorded = await recordAttempt({ outcomes: ctx.outcomes, config: deps.config }, send, { result, classification, at, durationMs, sourceAddress });
  logAttempt(deps.log, { send, remoteHost: result.remoteHost, sourceAddress, classification, recorded, at, durationMs });
  countAttempt(deps, send, recorded, at.getTime() + durationMs);
  return 'attempted';
}

/**
 * What changed since acceptance, as the gates would judge it now (DELIVERY_GATES: suspension, sandbox, suppression),
 * answered from the claimed row (its tenant and suppression were read with the claim): a suspended tenant's send is
 * dropped, a sandbox tenant's simulated, a recipient suppressed meanwhile dropped. Undefined: go on.
 */
async function holdBack(ctx: WorkerContext, send: ClaimedSend): Promise<DeliveryOutcome | undefined> {
  const { deps } = ctx;
  const at = deps.clock.now();
  const claimed: GateDeps = { ...gateDepsOf(deps), lookups: { isSuppressed: async () => send.suppressed } };
  const { final } = await runGates(claimed, gateSendOf(send, at), DELIVERY_GATES);
  switch (final.outcome) {
    case 'refuse':
      await recordDrop(ctx, send, { at, reason: 'tenant_suspended', gate: final.gate, detail: 'dropped before delivery: the tenant is suspended' });
      return 'dropped';
    case 'simulate':
      await recordSimulated(ctx, send, at);
      return 'simulated';
    case 'drop':
      await recordDrop(ctx, send, { at, reason: 'suppressed', gate: final.gate, detail: 'dropped before delivery: the recipient is suppressed' });
      return 'dropped';
    default:
      return undefined;
  }
}

/** The send as the gates see it, from what the delivery queue holds of it. */
const gateSendOf = (send: DeliverySend, at: Date, domainId = send.domain_id ?? ''): GateSend => ({
  tenant: { id: send.tenant_id, status: send.tenant_status, is_sandbox: send.tenant_is_sandbox },
  mode: send.mode,
  to: send.to_email,
  domainId,
  at,
});

/**
 * A deferred send's wake-up: a warm-up deferral (one before any attempt) passes the warm-up gate
 * again, which counts it for the new day (the quota counted it at acceptance). An outcome ends the
 * delivery for now; undefined: deliver now (a retry after an attempt is not re-gated).
 */
async function wakeUp(ctx: WorkerContext, send: DeliverySend): Promise<DeliveryOutcome | undefined> {
  const { deps } = ctx;
  const at = deps.clock.now();
  if (send.attempts > 0) return undefined;
  if (send.domain_id === null) {
    await recordDrop(ctx, send, { at, reason: 'domain_removed', gate: 'warmup', detail: 'dropped at wake-up: its sending domain was removed' });
    return 'dropped';
  }
  const decision = await warmupGate.decide(gateDepsOf(deps), gateSendOf(send, at, send.domain_id));
  switch (decision.outcome) {
    case 'defer':
      await recordRedeferral(ctx, send, { at, until: decision.until, detail: decision.detail ?? {} });
      return 'redeferred';
    case 'drop':
      await recordDrop(ctx, send, { at, reason: 'suppressed', gate: 'warmup', detail: 'dropped at wake-up: the recipient is suppressed' });
      return 'dropped';
    default:
      return undefined;
  }
}

/** The attempt's outcome in the metrics; a delivery also gives its latency since acceptance (retries included). */
function countAttempt(deps: DeliveryDeps, send: DeliverySend, recorded: RecordedOutcome, doneAtMs: number): void {
  const metrics = deps.metrics;
  if (!metrics) return;
  metrics.messages.inc({ outcome: recorded.outcome });
  if (recorded.outcome === 'delivered') metrics.deliveryLatency.observe(Math.max(0, doneAtMs - send.created_at.getTime()) / 1000);
}
