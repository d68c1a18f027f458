// The caller's status changes of a campaign: schedule and unschedule, send (with Idempotency-Key replay), pause, resume and cancel; each checked against the
// transition table and committed with its jobs and audit row.
import { createHash } from 'node:crypto';
import { writeAudit, type AuditActor } from '../operations/audit/log.js';
import type { Queryable } from '../db/connection.js';
import { AppError, conflict, validationError } from '../kernel/errors.js';
import {
  answerIdempotencyKey,
  claimIdempotencyKey,
  IDEMPOTENCY_CLAIM_LEASE_MS,
  IDEMPOTENCY_WINDOW_MS,
  releaseIdempotencyKey,
} from '../sending/outbound-log/queries.js';
import type { SendingDeps } from '../sending/deps.js';
import { monthlyUsage } from '../limits/quota/usage.js';
import { enqueueFanout } from './fanout-jobs.js';
import { forecastCampaign, type ForecastDeps, type SendForecast } from './forecast.js';
import { requireStatus, TRANSITIONS, type CampaignAction } from './lifecycle-table.js';
import { transition, type CampaignRow, type StatusChange } from './queries.js';
import { checkSendable } from './readiness.js';
import { requireCampaign, viewOf, type CampaignView } from './service.js';

/** What the status changes need: the send path's deps (database, queues, clock, look-ups, config), and the tenant query slots the forecast counts in. */
export type LifecycleDeps = Pick<SendingDeps, 'sql' | 'boss' | 'clock' | 'config' | 'lookups' | 'log'> & Pick<ForecastDeps, 'queries'>;

export interface Caller {
  tenantId: string;
  actor: AuditActor;
  /** The key's mode ('test' keys simulate every send); sessions send live. */
  mode: 'live' | 'test';
}

/** The audit action of each status change (campaign.<name>). */
const AUDIT_ACTION: Record<CampaignAction, string> = {
  edit: 'updated',
  delete: 'deleted',
  schedule: 'scheduled',
  unschedule: 'unscheduled',
  send: 'send_started',
  pause: 'paused',
  resume: 'resumed',
  cancel: 'cancelled',
};

/**
 * Applies `action` to the campaign in one transaction: the row locked, its status checked against the table
 * (409 otherwise), the change written, then `also` (jobs to enqueue, an Idempotency-Key answer) and the audit row.
 */
async function apply(
  deps: LifecycleDeps,
  caller: Caller,
  id: string,
  action: CampaignAction,
  change: (row: CampaignRow) => StatusChange,
  also?: (tx: Queryable, row: CampaignRow) => Promise<void>,
): Promise<CampaignRow> {
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const row = await requireCampaign(tx, caller.tenantId, id, { lock: true });
    requireStatus(row, action);
    const updated = (await transition(tx, row.id, TRANSITIONS[action].from, TRANSITIONS[action].to!, change(row), at))!;
    if (also) await also(tx, updated);
    await writeAudit(tx, {
      tenantId: caller.tenantId,
      actor: caller.actor,
      action: `campaign.${AUDIT_ACTION[action]}`,
      resourceType: 'campaign',
      resourceId: row.id,
      metadata: { name: row.name, from: row.status, to: updated.status },
      at,
    });
    return updated;
  });
}

/**
 * POST /schedule: a draft becomes scheduled for `scheduledAt`, which must be in the future (422). The campaign must
 * be sendable now (target, From, content: 422 or 412), and is checked again when its time comes. A pg-boss job
 * starts it then, in whichever process works the queue, also after a restart.
 */
export async function scheduleCampaign(deps: LifecycleDeps, caller: Caller, id: string, scheduledAt: Date): Promise<CampaignView> {
  if (Number.isNaN(scheduledAt.getTime())) throw validationError('scheduled_at', 'must be a timestamp (RFC 3339)');
  if (scheduledAt.getTime() <= deps.clock.now().getTime()) throw validationError('scheduled_at', 'must be in the future');
  const current = await requireCampaign(deps.sql, caller.tenantId, id);
  requireStatus(current, 'schedule');
  await checkSendable(deps, current, caller.mode);
  const row = await apply(
    deps,
    caller,
    id,
    'schedule',
    () => ({ scheduled_at: scheduledAt, send_mode: caller.mode }),
    (tx, r) => enqueueFanout(deps, tx, r.id, scheduledAt),
  );
  return viewOf(deps.sql, row);
}

/** DELETE /schedule: back to draft (the job of the old time finds a draft and does nothing). */
export async function unscheduleCampaign(deps: LifecycleDeps, caller: Caller, id: string): Promise<CampaignView> {
  return viewOf(deps.sql, await apply(deps, caller, id, 'unschedule', () => ({ scheduled_at: null, send_mode: null })));
}

export interface SendAnswer {
  campaign_id: string;
  status: string;
  /** What the send will do, as it stood when it started; null when the target could not be counted then. */
  forecast: SendForecast | null;
}

export interface SendResult {
  answer: SendAnswer;
  /** The stored answer of an earlier request with the same Idempotency-Key. */
  replayed: boolean;
}

/** The change that starts sending: a fresh fan-out state. */
const startChange = (mode: 'live' | 'test', at: Date): StatusChange => ({
  started_at: at,
  send_mode: mode,
  waiting_reason: null,
  waiting_until: null,
  failure_reason: null,
  paused_reason: null,
  target_cursor: null,
  targeted_at: null,
});

async function startSending(
  deps: LifecycleDeps,
  caller: Caller,
  id: string,
  remember?: (tx: Queryable, answer: SendAnswer) => Promise<void>,
): Promise<SendAnswer> {
  const current = await requireCampaign(deps.sql, caller.tenantId, id);
  requireStatus(current, 'send');
  await checkSendable(deps, current, caller.mode);
  const at = deps.clock.now();
  // At or over the month's cap a live send starts nothing (402, as the send path answers; simulated sends count none).
  if (caller.mode === 'live') {
    const usage = await monthlyUsage(deps.sql, caller.tenantId, at);
    if (usage.used >= usage.cap) throw new AppError('quota_exceeded', `the monthly send cap of ${usage.cap} is reached: the campaign was not started`);
  }
  const forecast = await forecastCampaign(deps, current, caller.mode).catch((err: unknown) => {
    // Past the tenant's query budget or deadline the send still starts (the fan-out has its own); the forecast is left out.
    if (err instanceof AppError) return null;
    throw err;
  });
  let answer: SendAnswer | undefined;
  await apply(
    deps,
    caller,
    id,
    'send',
    () => startChange(caller.mode, at),
    async (tx, r) => {
      await enqueueFanout(deps, tx, r.id);
      answer = { campaign_id: r.id, status: r.status, forecast };
      if (remember) await remember(tx, answer);
    },
  );
  return answer!;
}

/**
 * POST /send: a draft or scheduled campaign starts sending now (202 {campaign_id, status}); any other status is 409.
 * Idempotency-Key as on POST /transactional/send: the same key for the same campaign within 24 hours answers the
 * first answer again (replayed) and starts nothing; the same key for another campaign is 409, as is a repeat while
 * the first request still runs. Keys are per tenant and key mode, apart from the transactional endpoint's.
 */
export async function sendCampaign(deps: LifecycleDeps, caller: Caller, id: string, idempotencyKey?: string): Promise<SendResult> {
  if (idempotencyKey === undefined) return { answer: await startSending(deps, caller, id), replayed: false };
  const at = deps.clock.now();
  const requestHash = createHash('sha256').update(`campaign-send:${id.toLowerCase()}`).digest('hex');
  const key = `${caller.mode}:campaign-send:${idempotencyKey}`;
  const holder = await claimIdempotencyKey(deps.sql, {
    tenantId: caller.tenantId,
    key,
    requestHash,
    at,
    expiredBefore: new Date(at.getTime() - IDEMPOTENCY_WINDOW_MS),
    abandonedBefore: new Date(at.getTime() - IDEMPOTENCY_CLAIM_LEASE_MS),
  });
  if (holder) {
    if (holder.request_hash !== requestHash) throw conflict('this Idempotency-Key was used for another campaign in the last 24 hours');
    if (holder.status === 0) throw conflict('a request with this Idempotency-Key is still being processed; retry shortly');
    return { answer: holder.response as SendAnswer, replayed: true };
  }
  try {
    const answer = await startSending(deps, caller, id, (tx, a) => answerIdempotencyKey(tx, { tenantId: caller.tenantId, key, status: 202, response: a }));
    return { answer, replayed: false };
  } catch (err) {
    // Nothing started: the key is free again for a retry.
    await releaseIdempotencyKey(deps.sql, caller.tenantId, key).catch(() => {});
    throw err;
  }
}

/** POST /pause: a sending campaign stops after the batch in hand; nothing queued is taken back. */
export async function pauseCampaign(deps: LifecycleDeps, caller: Caller, id: string): Promise<CampaignView> {
  const at = deps.clock.now();
  return viewOf(deps.sql, await apply(deps, caller, id, 'pause', () => ({ paused_at: at, waiting_reason: null, waiting_until: null, paused_reason: null })));
}

/**
 * POST /resume: a paused campaign (by a caller, at the quota, or over the render budget) goes on where it stopped; recipients left pending by the budget are
 * rendered again.
 */
export async function resumeCampaign(deps: LifecycleDeps, caller: Caller, id: string): Promise<CampaignView> {
  const row = await apply(
    deps,
    caller,
    id,
    'resume',
    () => ({ waiting_reason: null, waiting_until: null, paused_reason: null }),
    (tx, r) => enqueueFanout(deps, tx, r.id),
  );
  return viewOf(deps.sql, row);
}

/**
 * POST /cancel: the campaign stops for good. Recipients not yet sent become skipped ('cancelled') — the fan-out
 * job sweeps them, after the batch in hand, so no recipient is both sent and counted cancelled.
 */
export async function cancelCampaign(deps: LifecycleDeps, caller: Caller, id: string): Promise<CampaignView> {
  const at = deps.clock.now();
  const row = await apply(
    deps,
    caller,
    id,
    'cancel',
    () => ({ cancelled_at: at, waiting_reason: null, waiting_until: null, paused_reason: null }),
    (tx, r) => (r.started_at ? enqueueFanout(deps, tx, r.id) : Promise.resolve()),
  );
  return viewOf(deps.sql, row);
}
