// The inbound-webhook job: load the delivery, claim one attempt, POST the stored message signed, and record delivered / retry (a new job) / dead.
import type { Job } from 'pg-boss';
import { isUuid } from '../../shared/kernel/ids.js';
import type { InboundWebhookJob } from '../../shared/inbound/jobs.js';
import { claimAttempt, findDeliveryForJob, loadRawMessage, markDead, markDelivered, type DeliveryForJob } from '../../shared/webhooks/inbound/queries.js';
import { scheduleRetry } from '../../shared/webhooks/inbound/retry.js';
import { openSecret } from '../../shared/webhooks/inbound/secret.js';
import type { Metrics } from '../../shared/operations/metrics/metrics.js';
import type { DomainDeps } from '../../shared/deliverability/domains/deps.js';
import type { Boss } from '../../shared/jobs/boss.js';
import { SealError } from '../../shared/kernel/secrets/sealed-box.js';
import { postToWebhook, type PostResult } from './deliver.js';
import { decide, type Decision } from './schedule.js';

/** What the outbound role already holds: the database, queue, clock, resolver and sealing box. */
/** `metrics` (webhook attempts) is absent in tests that build the deps by hand. */
export type WebhookDeps = Pick<DomainDeps, 'sql' | 'config' | 'clock' | 'log' | 'dns' | 'vault'> & { boss: Boss; metrics?: Metrics };

export type WebhookJobOutcome = 'skipped' | 'delivered' | 'retry' | 'dead';

/**
 * The delivery is pending but not due: another job holds its attempt in flight, or this job came
 * early (a duplicate, or clocks apart). Thrown so pg-boss runs the job again later rather than
 * dropping what may be the delivery's only job.
 */
export class DeliveryNotDueError extends Error {
  override name = 'DeliveryNotDueError';
}

/** A job this early (clock skew between us and the database that schedules it) still runs. */
const DUE_TOLERANCE_MS = 1000;
/** An attempt holds its delivery for the receiver timeout plus this, then counts as lost. */
const LEASE_MARGIN_MS = 5000;

type Outcome = { lastStatus: number | null; lastError: string | null; at: Date };

async function record(deps: WebhookDeps, d: DeliveryForJob, attempt: number, decision: Decision, result: PostResult | undefined): Promise<WebhookJobOutcome> {
  const at = deps.clock.now();
  // A POST was made (no result: the delivery could not even be attempted).
  if (result) deps.metrics?.webhookAttempts.inc({ kind: 'inbound', outcome: decision.kind === 'delivered' ? 'success' : 'failure' });
  const base: Outcome = { lastStatus: result?.kind === 'answered' ? result.status : null, lastError: null, at };
  let recorded: boolean;
  if (decision.kind === 'delivered') {
    recorded = await markDelivered(deps.sql, d.id, attempt, base);
  } else if (decision.kind === 'dead') {
    recorded = await markDead(deps.sql, d.id, attempt, { ...base, lastError: decision.error });
  } else {
    recorded = await scheduleRetry(deps, d.id, attempt, { ...base, lastError: decision.error, nextAttemptAt: decision.at });
  }
  if (!recorded) {
    deps.log.warn({ deliveryId: d.id, attempt, decision: decision.kind }, 'webhook delivery changed during its attempt; outcome not recorded');
    return 'skipped';
  }
  return decision.kind;
}

/** Why a pending delivery cannot be attempted at all (the tenant switched the webhook off or removed it), or undefined. */
function unusable(d: DeliveryForJob): string | undefined {
  if (d.enabled === null) return 'webhook not configured';
  if (!d.webhook_url) return 'webhook URL removed';
  if (!d.enabled) return 'webhook disabled';
  if (!d.secret_sealed) return 'webhook has no signing secret';
  return undefined;
}

/**
 * Runs one job to its end. Receiver outcomes are stored, never thrown; a throw (database down,
 * DeliveryNotDueError) means pg-boss should run the job again. A finished delivery is never POSTed again.
 */
export async function runWebhookJob(deps: WebhookDeps, job: Pick<Job<InboundWebhookJob>, 'data'>): Promise<WebhookJobOutcome> {
  const id: unknown = job.data?.delivery_id;
  // A malformed job names nothing; running it again would fail the same way.
  if (typeof id !== 'string' || !isUuid(id)) return 'skipped';
  const d = await findDeliveryForJob(deps.sql, id);
  if (!d || d.status !== 'pending') return 'skipped';
  const now = deps.clock.now();
  const dueBy = new Date(now.getTime() + DUE_TOLERANCE_MS);
  if (d.next_attempt_at && d.next_attempt_at > dueBy) throw new DeliveryNotDueError(`delivery ${id} is not due before ${d.next_attempt_at.toISOString()}`);
  const reason = unusable(d);
  if (reason !== undefined) {
    // Dead rather than waiting: nothing says the webhook comes back, and a replay from the dead letters is one call away.
    const killed = await markDead(deps.sql, d.id, d.attempts, { lastStatus: null, lastError: reason, at: now });
    return killed ? 'dead' : 'skipped';
  }
  const leaseUntil = new Date(now.getTime() + deps.config.webhooks.timeout_seconds * 1000 + LEASE_MARGIN_MS);
  const attempt = await claimAttempt(deps.sql, d.id, { at: now, dueBy, leaseUntil });
  if (attempt === undefined) {
    const again = await findDeliveryForJob(deps.sql, id);
    if (again?.status === 'pending') throw new DeliveryNotDueError(`delivery ${id} is being attempted by another job`);
    return 'skipped';
  }
  const raw = await loadRawMessage(deps.sql, d.inbound_message_id);
  if (!raw) return record(deps, d, attempt, { kind: 'dead', error: 'the inbound message is no longer stored' }, undefined);
  let secret: string;
  try {
    secret = openSecret(deps.vault, d.tenant_id, d.secret_sealed!);
  } catch (err) {
    if (!(err instanceof SealError)) throw err;
    // An operator problem (another master key): retried on the schedule, and replayable once fixed.
    const result: PostResult = { kind: 'failed', error: `the signing secret cannot be opened: ${err.message}`, timedOut: false, durationMs: 0 };
    return record(deps, d, attempt, decide(deps.config.webhooks, { attempt, result, now: deps.clock.now() }), result);
  }
  const result = await postToWebhook(
    { dns: deps.dns, webhooks: deps.config.webhooks },
    { url: d.webhook_url!, secret, tenantId: d.tenant_id, recipient: d.recipient, deliveryId: d.id, attempt, body: raw },
  );
  deps.log.debug({ deliveryId: d.id, attempt, result: result.kind, durationMs: result.durationMs }, 'webhook attempt done');
  return record(deps, d, attempt, decide(deps.config.webhooks, { attempt, result, now: deps.clock.now() }), result);
}
