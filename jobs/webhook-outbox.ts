// The one claim loop of both webhook outboxes (event and inbound): claim due rows, sign each with its pipeline's signer, POST it,
// and record delivered / retry on the backoff / dead; a full batch claims again at once, otherwise it waits poll_interval_ms.
import type { Clock } from '../shared/kernel/clock.js';
import type { Config } from '../shared/config/index.js';
import type { Sql } from '../shared/db/connection.js';
import type { DnsResolver } from '../shared/kernel/dns.js';
import type { Logger } from '../shared/kernel/log.js';
import { SealError, type SealedBox } from '../shared/kernel/secrets/sealed-box.js';
import type { Metrics } from '../shared/operations/metrics/metrics.js';
import { recordAttempt, type Claim, type Outbox } from '../shared/webhooks/outbox.js';
import type { PostResult, SignedRequest } from '../shared/webhooks/post.js';
import { decide, type Decision } from '../shared/webhooks/retry-schedule.js';
import { postSigned } from './webhook-post.js';

export interface OutboxDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  log: Logger;
  dns: DnsResolver;
  vault: SealedBox;
  /** The process's metrics (webhook attempts); absent in tests that build the deps by hand. */
  metrics?: Metrics;
}

/** What differs between the two outboxes: what a claim reads, why a row cannot be attempted, and how its POST is signed. */
export interface OutboxPipeline<D extends { id: string; attempts: number }> {
  outbox: Outbox;
  claim(sql: Sql, c: Claim): Promise<D[]>;
  /** Why this delivery cannot be attempted at all (dead at once: nothing says it comes back, a replay is one call away), or undefined. */
  unusable(d: D): string | undefined;
  /** The signed request of this attempt. Throws SealError when a signing secret does not open (another master key). */
  sign(vault: SealedBox, d: D, now: Date): SignedRequest;
}

/** An attempt holds its delivery for the receiver timeout plus this, then counts as lost and is taken again. */
const LEASE_MARGIN_MS = 5000;

export type AttemptOutcome = 'delivered' | 'retry' | 'dead' | 'stale';

async function attempt<D extends { id: string; attempts: number }>(deps: OutboxDeps, p: OutboxPipeline<D>, d: D): Promise<AttemptOutcome> {
  let decision: Decision;
  let result: PostResult | undefined;
  const reason = p.unusable(d);
  if (reason !== undefined) {
    decision = { kind: 'dead', error: reason };
  } else {
    let request: SignedRequest | undefined;
    try {
      request = p.sign(deps.vault, d, deps.clock.now());
    } catch (err) {
      if (!(err instanceof SealError)) throw err;
      // An operator problem: retried on the schedule, and replayable once fixed.
      result = { kind: 'failed', error: `the signing secret cannot be opened: ${err.message}`, timedOut: false, durationMs: 0 };
    }
    if (request) result = await postSigned({ dns: deps.dns, webhooks: deps.config.webhooks }, request);
    decision = decide(deps.config.webhooks, { attempt: d.attempts, result: result!, now: deps.clock.now() });
    if (request) deps.metrics?.webhookAttempts.inc({ kind: p.outbox, outcome: decision.kind === 'delivered' ? 'success' : 'failure' });
  }
  const recorded = await recordAttempt(deps.sql, p.outbox, d.id, d.attempts, {
    status: decision.kind === 'retry' ? 'pending' : decision.kind,
    lastStatus: result?.kind === 'answered' ? result.status : null,
    lastError: decision.kind === 'delivered' ? null : decision.error,
    durationMs: result ? result.durationMs : null,
    nextAttemptAt: decision.kind === 'retry' ? decision.at : null,
    at: deps.clock.now(),
  });
  if (!recorded) {
    deps.log.warn({ outbox: p.outbox, deliveryId: d.id, attempt: d.attempts }, 'webhook delivery changed during its attempt; outcome not recorded');
    return 'stale';
  }
  return decision.kind;
}

/**
 * One pass: claims up to `limit` due deliveries and attempts them all at once. Returns how many were
 * claimed (a full batch means more may be waiting) and each outcome. Receiver outcomes are stored, never thrown.
 */
export async function deliverDue<D extends { id: string; attempts: number }>(
  deps: OutboxDeps,
  p: OutboxPipeline<D>,
  limit = deps.config.webhooks.workers.batch_size,
): Promise<{ claimed: number; outcomes: AttemptOutcome[] }> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + deps.config.webhooks.timeout_seconds * 1000 + LEASE_MARGIN_MS);
  const claimed = await p.claim(deps.sql, { dueBy: now, leaseUntil, at: now, limit });
  const outcomes = await Promise.all(claimed.map((d) => attempt(deps, p, d)));
  return { claimed: claimed.length, outcomes };
}

export interface RunningOutbox {
  /** Stops claiming and waits for the POSTs in flight (each ends within the receiver timeout). */
  stop(): Promise<void>;
}

/** The role's loop over one outbox. Several processes may run it: claims skip each other's rows. */
export function startOutboxDelivery<D extends { id: string; attempts: number }>(deps: OutboxDeps, p: OutboxPipeline<D>): RunningOutbox {
  const log = deps.log.child({ worker: `${p.outbox}-webhook` });
  const { batch_size: batchSize, poll_interval_ms: pollMs } = deps.config.webhooks.workers;
  let stopping = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopping) {
      let full = false;
      try {
        full = (await deliverDue({ ...deps, log }, p, batchSize)).claimed >= batchSize;
      } catch (err) {
        // The database is away or a bug: the claimed rows' leases run out and they are taken again.
        log.error({ err }, `${p.outbox} webhook pass failed; trying again after the poll interval`);
      }
      if (full || stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pollMs);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      wake = undefined;
    }
  })();
  log.info({ batchSize, pollMs }, `${p.outbox} webhook delivery started`);
  return {
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      log.info(`${p.outbox} webhook delivery stopped`);
    },
  };
}
