// SQL for the shared per-window request counters the sliding-window limiter weighs.
import type { Queryable } from '../../db/connection.js';

export interface CounterDelta {
  bucket: string;
  windowStart: Date;
  windowSeconds: number;
  delta: number;
}

export interface CounterKey {
  bucket: string;
  windowStart: Date;
}

/** The map key of a window's count: `bucket|windowStartMs`. */
export const counterKey = (bucket: string, windowStartMs: number) => `${bucket}|${windowStartMs}`;

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
  for (const r of rows) counts.set(counterKey(r.bucket, r.window_start.getTime()), r.count);
  return counts;
}

/** The global counts of some windows, keyed `bucket|windowStartMs`; a window nobody counted yet is absent. Writes nothing. */
export async function readCounters(db: Queryable, keys: CounterKey[]): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  if (keys.length === 0) return counts;
  const rows = await db<{ bucket: string; window_start: Date; count: number }[]>`
    select c.bucket, c.window_start, c.count
    from unnest(${keys.map((k) => k.bucket)}::text[], ${keys.map((k) => k.windowStart.toISOString())}::timestamptz[]) as k(bucket, window_start)
    join rate_limit_counters c on c.bucket = k.bucket and c.window_start = k.window_start`;
  for (const r of rows) counts.set(counterKey(r.bucket, r.window_start.getTime()), r.count);
  return counts;
}

export async function deleteExpiredCounters(db: Queryable, before: Date): Promise<void> {
  await db`delete from rate_limit_counters where window_start < ${before}`;
}
