// Event-webhook delivery: claim due outbox rows, POST each signed (Standard Webhooks), record delivered / retry on the backoff / dead; and the loop the
// outbound role runs.
import type { Clock } from '../../shared/kernel/clock.js';
import type { Config } from '../../shared/config/index.js';
import type { Sql } from '../../shared/db/connection.js';
import type { DnsResolver } from '../../shared/kernel/dns.js';
import type { Logger } from '../../shared/kernel/log.js';
import { SealError, type SealedBox } from '../../shared/kernel/secrets/sealed-box.js';
import type { PostResult } from '../../shared/webhooks/post.js';
import { postSigned } from '../webhook-post.js';
import { decide, type Decision } from '../../shared/webhooks/retry-schedule.js';
import type { Metrics } from '../../shared/operations/metrics/metrics.js';
import { claimDueDeliveries, recordAttempt, type ClaimedDelivery } from '../../shared/webhooks/events/queries.js';
import { activeSecrets, bodyOf, signedHeaders } from '../../shared/webhooks/events/signing.js';

export interface EventWebhookDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  log: Logger;
  dns: DnsResolver;
  vault: SealedBox;
  /** The process's metrics (webhook attempts); absent in tests that build the deps by hand. */
  metrics?: Metrics;
}

/** An attempt holds its delivery for the receiver timeout plus this, then counts as lost and is taken again. */
const LEASE_MARGIN_MS = 5000;

export type AttemptOutcome = 'delivered' | 'retry' | 'dead' | 'stale';

async function attempt(deps: EventWebhookDeps, d: ClaimedDelivery): Promise<AttemptOutcome> {
  const now = deps.clock.now();
  let decision: Decision;
  let result: PostResult | undefined;
  if (!d.enabled) {
    // Dead rather than waiting: nothing says the endpoint comes back, and a replay is one call away.
    decision = { kind: 'dead', error: 'webhook disabled' };
  } else {
    let secrets: string[] | undefined;
    try {
      secrets = activeSecrets(deps.vault, { ...d, id: d.webhook_id }, now);
    } catch (err) {
      if (!(err instanceof SealError)) throw err;
      // An operator problem (another master key): retried on the schedule, replayable once fixed.
      result = { kind: 'failed', error: `the signing secret cannot be opened: ${err.message}`, timedOut: false, durationMs: 0 };
    }
    if (secrets) {
      const body = bodyOf(d.payload);
      const headers = signedHeaders({ id: d.id, at: now, body, secrets });
      result = await postSigned({ dns: deps.dns, webhooks: deps.config.webhooks }, { url: d.url, headers, body: Buffer.from(body) });
    }
    decision = decide(deps.config.webhooks, { attempt: d.attempts, result: result!, now: deps.clock.now() });
    if (secrets) deps.metrics?.webhookAttempts.inc({ kind: 'event', outcome: decision.kind === 'delivered' ? 'success' : 'failure' });
  }
  const recorded = await recordAttempt(deps.sql, d.id, d.attempts, {
    status: decision.kind === 'retry' ? 'pending' : decision.kind,
    lastStatus: result?.kind === 'answered' ? result.status : null,
    lastError: decision.kind === 'delivered' ? null : decision.error,
    durationMs: result ? result.durationMs : null,
    nextAttemptAt: decision.kind === 'retry' ? decision.at : null,
    at: deps.clock.now(),
  });
  if (!recorded) {
    deps.log.warn({ deliveryId: d.id, attempt: d.attempts }, 'event webhook delivery changed during its attempt; outcome not recorded');
    return 'stale';
  }
  return decision.kind;
}

/**
 * One pass: claims up to `limit` due deliveries and attempts them all at once. Returns how many
 * were claimed (a full batch means more may be waiting). Receiver outcomes are stored, never thrown.
 */
export async function deliverDueEventWebhooks(
  deps: EventWebhookDeps,
  limit = deps.config.webhooks.workers.batch_size,
): Promise<{ claimed: number; outcomes: AttemptOutcome[] }> {
  const now = deps.clock.now();
  const leaseUntil = new Date(now.getTime() + deps.config.webhooks.timeout_seconds * 1000 + LEASE_MARGIN_MS);
  const claimed = await claimDueDeliveries(deps.sql, { dueBy: now, leaseUntil, at: now, limit });
  const outcomes = await Promise.all(claimed.map((d) => attempt(deps, d)));
  return { claimed: claimed.length, outcomes };
}

export interface RunningEventWebhooks {
  /** Stops claiming and waits for the POSTs in flight (each ends within the receiver timeout). */
  stop(): Promise<void>;
}

/**
 * The outbound role's loop over the outbox: a full batch claims again at once, otherwise it waits
 * poll_interval_ms. Several processes may run it: claims skip each other's rows.
 */
export function startEventWebhookDelivery(deps: EventWebhookDeps): RunningEventWebhooks {
  const log = deps.log.child({ worker: 'event-webhook' });
  const { batch_size: batchSize, poll_interval_ms: pollMs } = deps.config.webhooks.workers;
  let stopping = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopping) {
      let full = false;
      try {
        full = (await deliverDueEventWebhooks({ ...deps, log }, batchSize)).claimed >= batchSize;
      } catch (err) {
        // The database is away or a bug: the claimed rows' leases run out and they are taken again.
        log.error({ err }, 'event webhook pass failed; trying again after the poll interval');
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
  log.info({ batchSize, pollMs }, 'event webhook delivery started');
  return {
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      log.info('event webhook delivery stopped');
    },
  };
}
