// Polls the due POP3 bounce mailboxes: each new message (by UIDL) is stored as bounce mail for the same intake as the MX's, in the transaction that marks
// its UIDL fetched (and records the placement of a seed copy when a seed names the mailbox), then deleted on the server when asked.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../kernel/clock.js';
import { forEachLimit } from '../../kernel/concurrency.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import { summarizeHeaders, deliveredTo } from '../../inbound/headers.js';
import { storeReceivedIn } from '../../inbound/store.js';
import type { Boss } from '../../jobs/boss.js';
import type { Logger } from '../../kernel/log.js';
import { Pop3Error, type MailboxMessage, type MailboxOpener, type MailboxSession } from './mailbox-session.js';
import { observeInMailbox } from '../../deliverability/seed-mailboxes/placement.js';
import { claimDueMailboxes, fetchedUidls, forgetGoneUidls, markUidlFetched, recordPoll, type BounceMailboxRow } from './queries.js';

export interface PollerDeps extends MailboxOpener {
  sql: Sql;
  boss: Boss;
  clock: Clock;
  log: Logger;
  config: Pick<Config, 'bounceMailboxes'>;
}

export interface PollResult {
  /** Messages stored and handed to the bounce intake. */
  fetched: number;
  /** Messages not fetched because they were bigger than max_message_bytes (remembered, so not tried again). */
  skipped_too_big: number;
  /** Messages deleted on the server (delete_after_read). */
  deleted: number;
  /** Messages on the server fetched by an earlier poll. */
  already_fetched: number;
  /** Set when the poll failed (login refused, server unreachable, a command failed): what last_poll_error says. */
  error: string | null;
}

/** The longest a failing mailbox waits for its next poll: a broken one still costs a poll a day, and is seen fixed within one. */
export const MAX_BACKOFF_S = 86_400;

/**
 * When the next poll is due: poll_interval_s after one that worked; after n failures in a row
 * poll_interval_s × 2^n, up to MAX_BACKOFF_S (or the interval, when that is longer), so a dead or
 * hostile server is asked less and less often. A change to the mailbox makes it due at once.
 */
export function nextPollAt(at: Date, intervalS: number, failuresInARow: number): Date {
  const delayS = failuresInARow === 0 ? intervalS : Math.max(intervalS, Math.min(intervalS * 2 ** Math.min(failuresInARow, 30), MAX_BACKOFF_S));
  return new Date(at.getTime() + delayS * 1000);
}

/**
 * How long one poll keeps fetching: after it no new command starts (the rest come at the next poll), so a
 * server answering each command just inside timeout_ms holds the worker for this long plus one command.
 */
const budgetMs = (deps: PollerDeps) => deps.config.bounceMailboxes.timeout_ms * 4;

/** A lease on a claimed mailbox: longer than a poll can last (its budget, the RETR and DELE in flight, QUIT); a poller that died is retried after it. */
const leaseMs = (deps: PollerDeps) => budgetMs(deps) + deps.config.bounceMailboxes.timeout_ms * 2 + 60_000;

/**
 * One tick of the bounce-mailbox-poll worker: the due mailboxes (up to mailboxes_per_tick, at most
 * mailboxes_per_tenant_per_tick of one tenant), concurrent_polls at a time.
 */
export async function pollDueMailboxes(deps: PollerDeps): Promise<{ polled: number; fetched: number; failed: number }> {
  const now = deps.clock.now();
  const policy = deps.config.bounceMailboxes;
  const due = await claimDueMailboxes(deps.sql, now, policy.mailboxes_per_tick, policy.mailboxes_per_tenant_per_tick, leaseMs(deps));
  let fetched = 0;
  let failed = 0;
  await forEachLimit(due, policy.concurrent_polls, async (mailbox) => {
    const result = await pollMailbox(deps, mailbox);
    fetched += result.fetched;
    if (result.error !== null) failed++;
  });
  return { polled: due.length, fetched, failed };
}

/**
 * Polls one mailbox and records the outcome (last_polled_at, last_poll_error, the next poll). A failure
 * is recorded, never thrown: the messages stored before it stay stored, and the next poll goes on from
 * there (their UIDLs are remembered).
 */
export async function pollMailbox(deps: PollerDeps, mailbox: BounceMailboxRow): Promise<PollResult> {
  const result: PollResult = { fetched: 0, skipped_too_big: 0, deleted: 0, already_fetched: 0, error: null };
  const log = deps.log.child({ bounce_mailbox_id: mailbox.id, tenant_id: mailbox.tenant_id });
  let session: MailboxSession | undefined;
  try {
    // Wall-clock time, not the injected clock: this bounds real work.
    const budgetEndsAt = Date.now() + budgetMs(deps);
    session = await deps.openMailbox(mailbox, deps.config.bounceMailboxes);
    await drain(deps, mailbox, session, result, budgetEndsAt);
    await session.quit();
    session = undefined;
  } catch (err) {
    session?.abort();
    if (!(err instanceof Pop3Error)) log.error({ err }, 'bounce mailbox poll failed');
    result.error = (err as Error).message || String(err);
  }
  const at = deps.clock.now();
  const failures = result.error === null ? 0 : mailbox.consecutive_poll_failures + 1;
  await recordPoll(deps.sql, mailbox.id, { at, nextAt: nextPollAt(at, mailbox.poll_interval_s, failures), error: result.error, fetched: result.fetched });
  log.info({ ...result }, result.error === null ? 'bounce mailbox polled' : 'bounce mailbox poll failed');
  return result;
}

async function drain(deps: PollerDeps, mailbox: BounceMailboxRow, session: MailboxSession, result: PollResult, budgetEndsAt: number): Promise<void> {
  const messages = await session.list();
  const seen = await fetchedUidls(
    deps.sql,
    mailbox.id,
    messages.map((m) => m.uidl),
  );
  const { max_messages_per_poll: perPoll, max_message_bytes: maxBytes } = deps.config.bounceMailboxes;
  let taken = 0;
  for (const message of messages) {
    if (Date.now() >= budgetEndsAt) break; // the rest come at the next poll
    if (seen.has(message.uidl)) {
      result.already_fetched++;
    } else {
      if (taken >= perPoll) continue; // the rest come at the next poll
      taken++;
      const stored = await fetchOne(deps, mailbox, session, message, maxBytes);
      if (stored === 'too_big') result.skipped_too_big++;
      else if (stored === 'stored') result.fetched++;
    }
    // A message fetched now or by an earlier poll whose DELE did not go through (a lost QUIT).
    if (mailbox.delete_after_read) {
      await session.delete(message.number);
      result.deleted++;
    }
  }
  // The server no longer has what it does not list: forget those UIDLs (after DELE they go at QUIT,
  // and are forgotten at the next poll, which no longer sees them).
  await forgetGoneUidls(
    deps.sql,
    mailbox.id,
    messages.map((m) => m.uidl),
  );
}

/**
 * Fetches one message and stores it with its UIDL mark in one transaction: either both are written or
 * neither, so a crash before the commit fetches it again and one after it never does.
 */
async function fetchOne(
  deps: PollerDeps,
  mailbox: BounceMailboxRow,
  session: MailboxSession,
  message: MailboxMessage,
  maxBytes: number,
): Promise<'stored' | 'too_big' | 'seen'> {
  const at = deps.clock.now();
  if (message.size > maxBytes) {
    const marked = await markUidlFetched(deps.sql, { mailboxId: mailbox.id, uidl: message.uidl, inboundMessageId: null, at });
    deps.log.warn({ bounce_mailbox_id: mailbox.id, uidl: message.uidl, size: message.size }, 'bounce mailbox message too big; skipped');
    return marked ? 'too_big' : 'seen';
  }
  const raw = await session.retrieve(message.number, maxBytes);
  const id = randomUUID();
  try {
    await deps.sql.begin(async (tx) => {
      await storeReceivedIn(tx, deps.boss, {
        id,
        receivedAt: at,
        remoteAddress: mailbox.host,
        helo: null,
        tls: mailbox.use_tls_implicit,
        // A bounce's envelope sender is null; what the mailbox's server saw is not known here.
        mailFrom: '',
        raw,
        authenticationResults: null,
        headers: summarizeHeaders(raw),
        recipients: [{ address: deliveredTo(raw) ?? mailbox.username.toLowerCase(), target: { kind: 'bounce', tenantId: mailbox.tenant_id } }],
      });
      // Another poll stored it first: roll this copy back.
      if (!(await markUidlFetched(tx, { mailboxId: mailbox.id, uidl: message.uidl, inboundMessageId: id, at }))) throw new AlreadyFetched();
      // A mailbox a seed names holds the seed's campaign copies: their placement commits with the UIDL mark.
      await observeInMailbox(tx, mailbox.id, raw, at);
    });
  } catch (err) {
    if (err instanceof AlreadyFetched) return 'seen';
    throw err;
  }
  return 'stored';
}

class AlreadyFetched extends Error {}
