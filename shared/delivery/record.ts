// What a delivery decided, and what that writes, each stored in one transaction with the send's place in the delivery queue: the attempt and its outcome
// (delivered, deferred for a retry, bounced), or a wake-up's drop or new deferral. The writes go through a DeliveryOutcomeStore (outcome-store.ts in
// production), so the rules run against any store.
import type { Config } from '../config/index.js';
import type { Sql } from '../db/connection.js';
import { GroupCommit } from '../db/group-commit.js';
import { insertEvents, type NewEvent } from '../engagement/events/queries.js';
import type { Logger } from '../kernel/log.js';
import { deliveredAlready, markDelivered, type Delivered, type DeliverySend, type StatusChange } from '../sending/outbound-log/delivery-queries.js';
import type { AttemptRow } from '../sending/outbound-log/queries.js';
import type { Refusal } from '../engagement/analytics/esp-suppressions.js';
import { dequeueDeliveries } from '../sending/outbound-log/delivery-queue.js';
import type { AttemptResult, Classification } from './classify.js';
import { nextRetry, retryDetail } from './retry.js';
import { bounceWrites, eventBase, type RecipientSuppression } from './outcomes.js';

/**
 * The writes the delivery outcome needs, in domain terms: each call stores everything one decision about one send
 * came to, all of it or none (outcome-store.ts keeps them in PostgreSQL, one transaction per call).
 */
export interface DeliveryOutcomeStore {
  settle(outcome: SendOutcome): Promise<void>;
}

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

/** Deliveries of the same moment, stored in one transaction. */
export type DeliveredWriter = GroupCommit<Delivered & { event: NewEvent }, void>;

/**
 * The common outcome, delivered, is stored by group commit: the attempts, the sends' new status, their events and
 * their removal from the delivery queue, for every delivery that ended in the same moment, in one transaction.
 */
export function createDeliveredWriter(sql: Sql, log: Logger): DeliveredWriter {
  return new GroupCommit<Delivered & { event: NewEvent }, void>(
    async (items, retry) => {
      await sql.begin(async (tx) => {
        // Retried alone after its batch failed: the batch may have committed (reply lost).
        if (retry && (await deliveredAlready(tx, items[0]!.attempt.send_id))) return;
        await markDelivered(tx, items);
        await insertEvents(
          tx,
          items.map((i) => i.event),
        );
        await dequeueDeliveries(
          tx,
          items.map((i) => i.attempt.send_id),
        );
      });
      return items.map(() => undefined);
    },
    log,
    'deliveries',
  );
}

/** A queue row whose send has nothing (more) to deliver: removed. */
export async function recordGone(deps: Pick<RecordDeps, 'outcomes'>, sendId: string): Promise<void> {
  await deps.outcomes.settle({ sendId, queue: 'removed' });
}

/** What an attempt came to, as stored: delivered, deferred (with its retry time) or bounced (hard or soft). */
export type RecordedOutcome = { outcome: 'delivered' } | { outcome: 'deferred'; nextRetry: Date } | { outcome: 'bounced'; bounce: 'hard' | 'soft' };

/** Stores one attempt: its row, the send's new status, its event, its retry time or its removal from the queue, a suppression. */
export async function recordAttempt(deps: RecordDeps, send: DeliverySend, m: MeasuredAttempt, delivered?: DeliveredWriter): Promise<RecordedOutcome> {
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
  if (delivered && c.verdict.result === 'delivered') {
    await delivered.write({
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
      outcome: c.verdict.result === 'delivered' ? 'delivered' : bounce ? 'bounced' : 'deferred',
      smtp_code: c.smtpCode,
      enhanced_code: c.enhancedCode,
      reply: c.reply,
      duration_ms: Math.round(m.durationMs),
    },
    // Delivered or bounced: its delivery has ended.
    queue: retry?.kind === 'retry' ? { dueAt: retry.at } : 'removed',
  };
  if (c.verdict.result === 'delivered') {
    outcome.status = { status: 'delivered', at: m.at, detail: `${result.remoteHost ?? 'remote host'}: ${c.reply}` };
    outcome.event = { ...eventBase(send, m.at), type: 'delivered', subtype: null, detail: facts };
  } else if (retry?.kind === 'retry') {
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
  // A refusal by a mailbox provider counts toward its automatic suppression (a block or a deferral storm).
  if (c.verdict.result !== 'delivered') {
    outcome.refusal = {
      tenantId: send.tenant_id,
      recipient: send.to_email,
      remoteHost: result.remoteHost,
      verdict: c.verdict.result,
      smtpCode: c.smtpCode,
      enhancedCode: c.enhancedCode,
      reply: c.reply,
      at: m.at,
    };
  }
  await deps.outcomes.settle(outcome);
  if (bounce) return { outcome: 'bounced', bounce };
  return retry?.kind === 'retry' ? { outcome: 'deferred', nextRetry: retry.at } : { outcome: 'delivered' };
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
