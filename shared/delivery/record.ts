// What a delivery decided, and what that writes, each stored in one transaction with the send's place in the delivery queue: the attempt and its outcome
// (delivered, deferred for a retry, bounced), or a wake-up's drop or new deferral. The writes go through a DeliveryOutcomeStore (outcome-store.ts in
// production), so the rules run against any store.
import type { Config } from '../config/index.js';
import type { NewEvent } from '../engagement/events/queries.js';
import type { Delivered, DeliverySend, StatusChange } from '../sending/outbound-log/delivery-queries.js';
import type { AttemptRow } from '../sending/outbound-log/queries.js';
import type { Refusal } from '../engagement/analytics/esp-suppressions.js';
import type { AttemptResult, Classification } from './classify.js';
import { nextRetry, retryDetail } from './retry.js';
import { bounceWrites, eventBase, type RecipientSuppression } from './outcomes.js';

/**
 * The writes the delivery outcome needs, in domain terms: each call stores everything one decision about one send
 * came to, all of it or none (outcome-store.ts keeps them in PostgreSQL, one transaction per call).
 */
export interface DeliveryOutcomeStore {
  settle(outcome: SendOutcome): Promise<void>;
  /** The common outcome, delivered: the attempt, the send's status and its event, out of the delivery queue (PostgreSQL: by group commit). */
  markDelivered(delivery: Delivery): Promise<void>;
}

/** A delivery as stored: its attempt, the send's status detail (who accepted it and what they said) and its event. */
export type Delivery = Delivered & { event: NewEvent };

/** What one decision about a send writes: each part is optional but the queue's verdict. */
export interface SendOutcome {
  sendId: string;
  /** The attempt made, when one was. */
  attempt?: Omit<AttemptRow, 'id'>;
  status?: StatusChange;
  event?: NewEvent;
  /** A hard bounce's recipient, put on its tenant's suppression list. */
  suppression?: RecipientSuppression;
  /** A refusal by a mailbox provider, counted toward its automatic suppression. */
  refusal?: Refusal;
  /** A message never sent gives its count back to the tenant's monthly quota (the month it was accepted in). */
  quotaReleased?: { tenantId: string; acceptedAt: Date };
  /** The send's place in the delivery queue: due again at an instant, or removed (its delivery has ended). */
  queue: { dueAt: Date } | 'removed';
}

export interface RecordDeps {
  outcomes: DeliveryOutcomeStore;
  config: Pick<Config, 'delivery'>;
}

/** The attempt as measured by the worker. */
export interface MeasuredAttempt {
  result: AttemptResult;
  classification: Classification;
  /** When the attempt started (the injected clock). */
  at: Date;
  durationMs: number;
  /** The IP-pool address it went out from, when one was bound (kept in the event's detail). */
  sourceAddress?: string | null;
}

/** A queue row whose send has nothing (more) to deliver: removed. */
export async function recordGone(deps: Pick<RecordDeps, 'outcomes'>, sendId: string): Promise<void> {
  await deps.outcomes.settle({ sendId, queue: 'removed' });
}

/** What an attempt came to, as stored: delivered, deferred (with its retry time) or bounced (hard or soft). */
export type RecordedOutcome = { outcome: 'delivered' } | { outcome: 'deferred'; nextRetry: Date } | { outcome: 'bounced'; bounce: 'hard' | 'soft' };

/** Stores one attempt: its row, the send's new status, its event, its retry time or its removal from the queue, a suppression. */
export async function recordAttempt(deps: RecordDeps, send: DeliverySend, m: MeasuredAttempt): Promise<RecordedOutcome> {
  const { classification: c, result } = m;
  const attempt = send.attempts + 1;
  const facts = {
    remote_host: result.remoteHost,
    reply: c.reply,
    smtp_code: c.smtpCode,
    enhanced_code: c.enhancedCode,
    attempt,
    ...(m.sourceAddress ? { source_address: m.sourceAddress } : {}),
  };
  if (c.verdict.result === 'delivered') {
    await deps.outcomes.markDelivered({
      attempt: {
        send_id: send.id,
        attempted_at: m.at,
        remote_host: result.remoteHost,
        outcome: 'delivered',
        smtp_code: c.smtpCode,
        enhanced_code: c.enhancedCode,
        reply: c.reply,
        duration_ms: Math.round(m.durationMs),
      },
      detail: `${result.remoteHost ?? 'remote host'}: ${c.reply}`,
      event: { ...eventBase(send, m.at), type: 'delivered', subtype: null, detail: facts },
    });
    return { outcome: 'delivered' };
  }
  const retry =
    c.verdict.result === 'temporary' ? nextRetry(deps.config.delivery.retry, { createdAt: send.first_attempt_at ?? m.at, now: m.at, attempt }) : undefined;
  const bounce = c.verdict.result === 'bounce' ? c.verdict.subtype : retry?.kind === 'give_up' ? 'soft' : undefined;
  const outcome: SendOutcome = {
    sendId: send.id,
    attempt: {
      send_id: send.id,
      attempted_at: m.at,
      remote_host: result.remoteHost,
      outcome: bounce ? 'bounced' : 'deferred',
      smtp_code: c.smtpCode,
      enhanced_code: c.enhancedCode,
      reply: c.reply,
      duration_ms: Math.round(m.durationMs),
    },
    // Bounced: its delivery has ended.
    queue: retry?.kind === 'retry' ? { dueAt: retry.at } : 'removed',
    // A refusal by a mailbox provider counts toward its automatic suppression (a block or a deferral storm).
    refusal: {
      tenantId: send.tenant_id,
      recipient: send.to_email,
      remoteHost: result.remoteHost,
      verdict: c.verdict.result,
      smtpCode: c.smtpCode,
      enhancedCode: c.enhancedCode,
      reply: c.reply,
      at: m.at,
    },
  };
  if (retry?.kind === 'retry') {
    outcome.status = { status: 'deferred', at: m.at, deferUntil: retry.at, detail: retryDetail(retry, attempt, c.reply) };
    outcome.event = {
      ...eventBase(send, m.at),
      type: 'deferred',
      subtype: null,
      detail: { reason: 'temporary_failure', ...facts, next_retry: retry.at.toISOString() },
    };
  } else if (bounce) {
    const reason = retry?.kind === 'give_up' ? retry.reason : null;
    const writes = bounceWrites({
      send,
      at: m.at,
      subtype: bounce,
      statusDetail: retry ? retryDetail(retry, attempt, c.reply) : c.reply,
      reply: c.reply,
      detail: { ...facts, ...(reason ? { reason } : {}) },
    });
    outcome.status = writes.status;
    outcome.event = writes.event;
    if (writes.suppression) outcome.suppression = writes.suppression;
  }
  await deps.outcomes.settle(outcome);
  if (retry?.kind === 'retry') return { outcome: 'deferred', nextRetry: retry.at };
  // Not retried: a bounce, hard or soft (a temporary failure given up on).
  return { outcome: 'bounced', bounce: bounce ?? 'soft' };
}

/**
 * A send that will not be delivered after all (recipient suppressed meanwhile, domain gone, tenant
 * suspended): dropped, with its event. A message never sent uses no quota, so its count is given back.
 */
export async function recordDrop(
  deps: Pick<RecordDeps, 'outcomes'>,
  send: DeliverySend,
  d: { at: Date; reason: string; gate: string; detail: string },
): Promise<void> {
  await deps.outcomes.settle({
    sendId: send.id,
    status: { status: 'dropped', at: d.at, detail: d.detail },
    quotaReleased: { tenantId: send.tenant_id, acceptedAt: send.created_at },
    event: { ...eventBase(send, d.at), type: 'dropped', subtype: null, detail: { reason: d.reason, gate: d.gate, at_wake_up: true } },
    queue: 'removed',
  });
}

/** A send of a tenant put in the sandbox after acceptance: intercepted as the sandbox gate would have, never delivered. */
export async function recordSimulated(deps: Pick<RecordDeps, 'outcomes'>, send: DeliverySend, at: Date): Promise<void> {
  await deps.outcomes.settle({
    sendId: send.id,
    status: { status: 'simulated', at, detail: 'sandbox tenant: recorded in the simulated-sends store, never delivered' },
    quotaReleased: { tenantId: send.tenant_id, acceptedAt: send.created_at },
    queue: 'removed',
  });
}

/** A warm-up deferral that wakes up over the cap again: deferred once more, due again then. */
export async function recordRedeferral(
  deps: Pick<RecordDeps, 'outcomes'>,
  send: DeliverySend,
  d: { at: Date; until: Date; detail: Record<string, unknown> },
): Promise<void> {
  await deps.outcomes.settle({
    sendId: send.id,
    status: { status: 'deferred', at: d.at, deferUntil: d.until, detail: `deferred by the warm-up gate until ${d.until.toISOString()}` },
    event: { ...eventBase(send, d.at), type: 'deferred', subtype: null, detail: { reason: 'warmup', until: d.until.toISOString(), ...d.detail } },
    queue: { dueAt: d.until },
  });
}

/** A claimed send with nothing to deliver (its bytes are gone): failed, so it is not retried forever. */
export async function recordFailure(deps: Pick<RecordDeps, 'outcomes'>, send: DeliverySend, d: { at: Date; detail: string }): Promise<void> {
  await deps.outcomes.settle({ sendId: send.id, status: { status: 'failed', at: d.at, detail: d.detail }, queue: 'removed' });
}
