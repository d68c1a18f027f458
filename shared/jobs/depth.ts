// Jobs waiting and running per job queue: what the metrics scrape reads (one grouped query over pg-boss's unfinished jobs, and the delivery queue).
import type { Queryable } from '../db/connection.js';
import type { QueueDepth } from '../operations/metrics/metrics.js';

/** The delivery queue's name in the gauges (the pg-boss queue it replaced had it). */
export const DELIVERY_QUEUE_NAME = 'outbound.deliver';

/**
 * Every queue, with zero for the idle ones. Only unfinished jobs are read (pg-boss's state enum orders
 * created < retry < active < completed, and its indexes serve `state < 'completed'`), so finished
 * history, however long, costs nothing. Deliveries are the delivery queue's rows (shared/sending/outbound-log/delivery-queue.ts),
 * counted as pg-boss counts jobs: active = held by a worker whose claim has not run out, waiting = the rest (due now,
 * or a retry or deferral due later).
 */
export async function readQueueDepths(sql: Queryable): Promise<QueueDepth[]> {
  const rows = await sql<{ queue: string; waiting: number; active: number }[]>`
    select q.name as queue,
           coalesce(j.waiting, 0)::int as waiting,
           coalesce(j.active, 0)::int as active
      from pgboss.queue q
      left join (
        select name,
               count(*) filter (where state in ('created', 'retry')) as waiting,
               count(*) filter (where state = 'active') as active
          from pgboss.job
         where state < 'completed'
         group by name
      ) j on j.name = q.name
     where q.name <> ${DELIVERY_QUEUE_NAME}
    union all
    select ${DELIVERY_QUEUE_NAME},
           count(*) filter (where claimed_at is null or due_at <= now())::int,
           count(*) filter (where claimed_at is not null and due_at > now())::int
      from delivery_queue
     order by 1`;
  return rows.map((r) => ({ queue: r.queue, waiting: r.waiting, active: r.active }));
}

/** One read shared by the scrape's gauges (two gauges, one query), refreshed at most every `ttlMs`. */
export function cachedQueueDepths(sql: Queryable, ttlMs: number, now: () => number = Date.now): () => Promise<QueueDepth[]> {
  let last: { at: number; value: Promise<QueueDepth[]> } | undefined;
  return () => {
    const t = now();
    if (!last || t - last.at >= ttlMs) {
      const value = readQueueDepths(sql);
      last = { at: t, value };
      // A failed read is not kept: the next scrape tries again.
      value.catch(() => {
        if (last?.value === value) last = undefined;
      });
    }
    return last.value;
  };
}
