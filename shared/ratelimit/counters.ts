// SQL for the shared fixed-window request counters.
import type { Queryable } from '../db/connection.js';

export interface CounterDelta {
  bucket: string;
  windowStart: Date;
  windowSeconds: number;
  delta: number;
}

/** Adds each delta (0 just reads) and returns the new global counts, keyed `bucket|windowStartMs`. */
export async function addToCounters(db: Queryable, deltas: CounterDelta[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (deltas.length === 0) return counts;
  const rows = await db<{ bucket: string; window_start: Date; count: number }[]>`
    insert into rate_limit_counters (bucket, window_start, window_seconds, count)
    select * from unnest(
      ${deltas.map((d) => d.bucket)}::text[],
      ${deltas.map((d) => d.windowStart.toISOString())}::timestamptz[],
      ${deltas.map((d) => d.windowSeconds)}::int[],
      ${deltas.map((d) => d.delta)}::int[])
    on conflict (bucket, window_start) do update set count = rate_limit_counters.count + excluded.count
    returning bucket, window_start, count`;
  for (const r of rows) counts.set(`${r.bucket}|${r.window_start.getTime()}`, r.count);
  return counts;
}

export async function deleteExpiredCounters(db: Queryable, before: Date): Promise<void> {
  await db`delete from rate_limit_counters where window_start < ${before}`;
}
