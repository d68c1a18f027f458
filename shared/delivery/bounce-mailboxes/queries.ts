// SQL of the POP3 bounce mailboxes: a tenant's rows, the poller's claim on due mailboxes, its outcome, and the UIDLs already fetched.
import type { Queryable } from '../../db/connection.js';

export interface BounceMailboxRow {
  id: string;
  tenant_id: string;
  name: string;
  host: string;
  port: number;
  username: string;
  password_sealed: Buffer;
  enabled: boolean;
  delete_after_read: boolean;
  poll_interval_s: number;
  use_tls_implicit: boolean;
  next_poll_at: Date;
  last_polled_at: Date | null;
  last_poll_error: string | null;
  /** Polls in a row that failed (0 after one that worked): what the backoff doubles on. */
  consecutive_poll_failures: number;
  messages_fetched: number;
  created_at: Date;
  updated_at: Date;
}

/** The fields a tenant sets. */
export type BounceMailboxFields = Pick<
  BounceMailboxRow,
  'name' | 'host' | 'port' | 'username' | 'password_sealed' | 'enabled' | 'delete_after_read' | 'poll_interval_s' | 'use_tls_implicit'
>;

const columns = (db: Queryable) => db`
  id, tenant_id, name, host, port, username, password_sealed, enabled, delete_after_read, poll_interval_s, use_tls_implicit,
  next_poll_at, last_polled_at, last_poll_error, consecutive_poll_failures, messages_fetched::float8 as messages_fetched, created_at, updated_at`;

export async function insertBounceMailbox(db: Queryable, row: BounceMailboxFields & { id: string; tenant_id: string; at: Date }): Promise<BounceMailboxRow> {
  const { at, ...fields } = row;
  const [created] = await db<BounceMailboxRow[]>`
    insert into bounce_mailboxes ${db({ ...fields, next_poll_at: at, created_at: at, updated_at: at })}
    returning ${columns(db)}`;
  return created!;
}

/**
 * The tenant's number of mailboxes, counted under a lock on the tenant's row (inside a transaction): two
 * creations at once cannot both take the last place.
 */
export async function countBounceMailboxesLocked(db: Queryable, tenantId: string): Promise<number> {
  await db`select 1 from tenants where id = ${tenantId} for update`;
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from bounce_mailboxes where tenant_id = ${tenantId}`;
  return row!.n;
}

export async function listBounceMailboxes(db: Queryable, tenantId: string): Promise<BounceMailboxRow[]> {
  return db<BounceMailboxRow[]>`select ${columns(db)} from bounce_mailboxes where tenant_id = ${tenantId} order by created_at desc, id desc`;
}

export async function findBounceMailbox(db: Queryable, tenantId: string, id: string): Promise<BounceMailboxRow | undefined> {
  const [row] = await db<BounceMailboxRow[]>`select ${columns(db)} from bounce_mailboxes where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

/** Changes the given fields; a changed mailbox is polled at the next tick. */
export async function updateBounceMailbox(
  db: Queryable,
  tenantId: string,
  id: string,
  changes: Partial<BounceMailboxFields>,
  at: Date,
): Promise<BounceMailboxRow | undefined> {
  const [row] = await db<BounceMailboxRow[]>`
    update bounce_mailboxes set ${db({ ...changes, updated_at: at, next_poll_at: at })}
    where tenant_id = ${tenantId} and id = ${id}
    returning ${columns(db)}`;
  return row;
}

export async function deleteBounceMailbox(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const rows = await db`delete from bounce_mailboxes where tenant_id = ${tenantId} and id = ${id} returning id`;
  return rows.length > 0;
}

/**
 * Takes up to `limit` enabled mailboxes whose poll is due and moves their next poll a lease ahead,
 * in one statement: a second poller (another process, a run-now beside the schedule) skips them.
 */
export async function claimDueMailboxes(db: Queryable, now: Date, limit: number, perTenant: number, leaseMs: number): Promise<BounceMailboxRow[]> {
  const leaseUntil = new Date(now.getTime() + leaseMs);
  // Each tenant's due mailboxes take turns (turn 1 of every tenant before turn 2 of any); the lock re-checks the
  // row, so a mailbox another poller claimed meanwhile is not claimed twice.
  return db<BounceMailboxRow[]>`
    with due as (
      select id, next_poll_at, row_number() over (partition by tenant_id order by next_poll_at, id) as turn
      from bounce_mailboxes where enabled and next_poll_at <= ${now}),
    picked as materialized (
      select b.id as picked_id from bounce_mailboxes b join due on due.id = b.id
      where due.turn <= ${perTenant} and b.enabled and b.next_poll_at <= ${now}
      order by due.turn, due.next_poll_at limit ${limit} for update of b skip locked)
    update bounce_mailboxes set next_poll_at = ${leaseUntil}
    from picked where id = picked.picked_id
    returning ${columns(db)}`;
}

/** A poll's outcome: when the next one is due, and its error (null when it worked, which also ends a run of failures). */
export async function recordPoll(db: Queryable, id: string, r: { at: Date; nextAt: Date; error: string | null; fetched: number }): Promise<void> {
  await db`
    update bounce_mailboxes
    set last_polled_at = ${r.at}, next_poll_at = ${r.nextAt}, last_poll_error = ${r.error}, messages_fetched = messages_fetched + ${r.fetched},
      consecutive_poll_failures = ${r.error === null ? 0 : db`consecutive_poll_failures + 1`}
    where id = ${id}`;
}

/** The UIDLs among `uidls` this mailbox has fetched before. */
export async function fetchedUidls(db: Queryable, mailboxId: string, uidls: string[]): Promise<Set<string>> {
  if (uidls.length === 0) return new Set();
  const rows = await db<{ uidl: string }[]>`
    select uidl from bounce_mailbox_uidls where mailbox_id = ${mailboxId} and uidl = any(${uidls}::text[])`;
  return new Set(rows.map((r) => r.uidl));
}

/** Marks a UIDL fetched; false when it already was (another poll got there first): then nothing else may be written. */
export async function markUidlFetched(db: Queryable, r: { mailboxId: string; uidl: string; inboundMessageId: string | null; at: Date }): Promise<boolean> {
  const rows = await db`
    insert into bounce_mailbox_uidls (mailbox_id, uidl, inbound_message_id, fetched_at)
    values (${r.mailboxId}, ${r.uidl}, ${r.inboundMessageId}, ${r.at})
    on conflict do nothing returning uidl`;
  return rows.length > 0;
}

/** Forgets the UIDLs no longer on the server (deleted there), so the table holds only what the mailbox holds. */
export async function forgetGoneUidls(db: Queryable, mailboxId: string, present: string[]): Promise<number> {
  const rows = await db`
    delete from bounce_mailbox_uidls where mailbox_id = ${mailboxId} and not (uidl = any(${present}::text[])) returning uidl`;
  return rows.length;
}
