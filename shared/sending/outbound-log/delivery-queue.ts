// SQL of the delivery queue (table delivery_queue): sends waiting to be delivered, claimed with a lease, rescheduled for a retry, and removed by the outcome
// that ends their delivery.
import type { Queryable } from '../../db/connection.js';

/** A send to put in the queue: due now or at a later instant (a warm-up deferral), or claimed already (handed to a worker). */
export interface QueuedDelivery {
  sendId: string;
  /** When a worker may take it: now, a deferral's end, or (claimed) the end of the lease. */
  dueAt: Date;
  /** Set when a worker of this process takes it at once: the instant of that claim. */
  claimedAt?: Date | undefined;
}

/** Puts sends in the queue inside the caller's transaction: they are queued iff it commits. */
export async function enqueueDeliveries(db: Queryable, items: readonly QueuedDelivery[]): Promise<void> {
  if (items.length === 0) return;
  await db`
    insert into delivery_queue (send_id, due_at, claimed_at)
    select * from unnest(
      ${db.array(items.map((i) => i.sendId))}::uuid[],
      ${db.array(items.map((i) => i.dueAt.toISOString()))}::timestamptz[],
      ${db.array(items.map((i) => i.claimedAt?.toISOString() ?? null) as string[])}::timestamptz[])
    on conflict (send_id) do update set due_at = excluded.due_at, claimed_at = excluded.claimed_at`;
}

/**
 * Claims up to `limit` due sends, oldest first, until `leaseUntil`: their due_at moves to the end of the lease, so no
 * other worker (of this process or another; SKIP LOCKED) takes them meanwhile, and a worker that dies leaves them to
 * the others once the lease ends. Returns the ids claimed.
 */
export async function claimDueDeliveries(db: Queryable, limit: number, now: Date, leaseUntil: Date): Promise<string[]> {
  // A materialized CTE is evaluated once: as an IN (… LIMIT … SKIP LOCKED) subquery it may run again per row.
  const rows = await db<{ send_id: string }[]>`
    with picked as materialized (
      select send_id from delivery_queue where due_at <= ${now} order by due_at limit ${limit} for update skip locked
    )
    update delivery_queue q set due_at = ${leaseUntil}, claimed_at = ${now} from picked where q.send_id = picked.send_id
    returning q.send_id`;
  return rows.map((r) => r.send_id);
}

/** The send is to be tried again at `dueAt` (a retry on the curve, a new warm-up deferral). */
export async function rescheduleDelivery(db: Queryable, sendId: string, dueAt: Date): Promise<void> {
  await db`update delivery_queue set due_at = ${dueAt}, claimed_at = null where send_id = ${sendId}`;
}

/** Gives claimed sends back to the queue, due at once (a stopping worker that never started them). */
export async function releaseDeliveries(db: Queryable, sendIds: readonly string[], now: Date): Promise<void> {
  if (sendIds.length === 0) return;
  await db`update delivery_queue set due_at = ${now}, claimed_at = null where send_id = any(${db.array([...sendIds])}::uuid[])`;
}

/** Their delivery has ended (delivered, bounced, dropped, failed, or nothing left to deliver): out of the queue. */
export async function dequeueDeliveries(db: Queryable, sendIds: readonly string[]): Promise<void> {
  if (sendIds.length === 0) return;
  if (sendIds.length === 1) await db`delete from delivery_queue where send_id = ${sendIds[0]!}`;
  else await db`delete from delivery_queue where send_id = any(${db.array([...sendIds])}::uuid[])`;
}
