// Last tick of each scheduled worker (name, time, outcome, duration), for /admin/workers.
import type { Queryable } from '../db/connection.js';

export interface TickRow {
  name: string;
  last_tick_at: Date;
  last_tick_outcome: string;
  last_tick_duration_ms: number;
  last_error: string | null;
}

export async function recordTick(
  db: Queryable,
  t: { name: string; at: Date; outcome: 'ok' | 'error'; durationMs: number; error: string | null },
): Promise<void> {
  await db`
    insert into worker_ticks (name, last_tick_at, last_tick_outcome, last_tick_duration_ms, last_error)
    values (${t.name}, ${t.at}, ${t.outcome}, ${Math.round(t.durationMs)}, ${t.error})
    on conflict (name) do update set
      last_tick_at = excluded.last_tick_at, last_tick_outcome = excluded.last_tick_outcome,
      last_tick_duration_ms = excluded.last_tick_duration_ms, last_error = excluded.last_error`;
}

export async function listTicks(db: Queryable): Promise<TickRow[]> {
  return db<TickRow[]>`select name, last_tick_at, last_tick_outcome, last_tick_duration_ms, last_error from worker_ticks order by name`;
}
