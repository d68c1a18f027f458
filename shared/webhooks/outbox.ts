// The webhook outboxes: event_webhook_deliveries and inbound_webhook_deliveries share one shape (status, attempts,
// next_attempt_at as due time and lease, the last outcome), so one claim, one outcome writer and one replay serve both.
import type { PendingQuery, Row } from 'postgres';
import type { Queryable } from '../db/connection.js';

/** Which outbox: the tenant's event endpoints, or its inbound-mail webhook. */
export type Outbox = 'event' | 'inbound';

const TABLES: Record<Outbox, string> = { event: 'event_webhook_deliveries', inbound: 'inbound_webhook_deliveries' };

export type DeliveryStatus = 'pending' | 'delivered' | 'dead';

export interface Claim {
  /** Rows due by then are taken. */
  dueBy: Date;
  /** The attempt holds its row until then (next_attempt_at): a worker that dies mid-POST loses it at that time. */
  leaseUntil: Date;
  at: Date;
  limit: number;
}

/**
 * Claims up to `limit` due pending rows for one attempt each: the count goes up and next_attempt_at
 * moves to the lease's end, so no worker takes them again before the outcome is written or the lease
 * runs out. SKIP LOCKED: workers in several processes share an outbox without waiting on each other.
 * `select` reads what the POST needs from the CTE `claimed` (the updated rows), in the same statement.
 */
export function claimDue<R extends Row>(db: Queryable, outbox: Outbox, c: Claim, select: PendingQuery<Row[]>): Promise<R[]> {
  const table = db(TABLES[outbox]);
  return db<R[]>`
    with due as (
      select id from ${table}
      where status = 'pending' and next_attempt_at <= ${c.dueBy}
      order by next_attempt_at
      limit ${c.limit}
      for update skip locked
    ), claimed as (
      update ${table} d
      set attempts = d.attempts + 1, last_attempt_at = ${c.at}, next_attempt_at = ${c.leaseUntil}
      from due where d.id = due.id
      returning d.*
    )
    ${select}`;
}

export interface AttemptOutcome {
  status: DeliveryStatus;
  /** The receiver's HTTP status; null when it never answered. */
  lastStatus: number | null;
  lastError: string | null;
  /** Null when no POST was made. */
  durationMs: number | null;
  /** pending: when the next attempt is due. */
  nextAttemptAt: Date | null;
  at: Date;
}

/**
 * Records the outcome of attempt `attempt` only (status pending, same count): a stale worker never
 * overwrites a later attempt's result. False when nothing matched.
 */
export async function recordAttempt(db: Queryable, outbox: Outbox, id: string, attempt: number, o: AttemptOutcome): Promise<boolean> {
  const rows = await db`
    update ${db(TABLES[outbox])}
    set status = ${o.status}, last_status = ${o.lastStatus}, last_error = ${o.lastError}, last_duration_ms = ${o.durationMs},
        next_attempt_at = ${o.nextAttemptAt},
        delivered_at = ${o.status === 'delivered' ? o.at : null}, dead_at = ${o.status === 'dead' ? o.at : null}
    where id = ${id} and status = 'pending' and attempts = ${attempt}`;
  return rows.count > 0;
}

/**
 * Puts one dead row of the tenant back to pending with a fresh count of attempts, due at once. The last
 * status and error stay until the next attempt replaces them. Undefined unless it is a dead row of that tenant.
 */
export async function reviveDead<R extends Row>(db: Queryable, outbox: Outbox, tenantId: string, id: string, at: Date): Promise<R | undefined> {
  const [row] = await db<R[]>`
    update ${db(TABLES[outbox])}
    set status = 'pending', attempts = 0, next_attempt_at = ${at}, dead_at = null
    where id = ${id} and tenant_id = ${tenantId} and status = 'dead'
    returning *`;
  return row;
}
