// Last tick of each scheduled worker (name, time, outcome, duration), its failing streak and its last alert, for /admin/workers.
import type { Queryable } from '../../db/connection.js';

/** ok and error as the tick went; skipped when an environment flag keeps the worker off. */
export type TickOutcome = 'ok' | 'error' | 'skipped';

export interface TickRow {
  name: string;
  last_tick_at: Date;
  last_tick_outcome: TickOutcome;
  last_tick_duration_ms: number;
  last_error: string | null;
  /** Failed ticks in a row, up to the last one (0 after a success). */
  consecutive_failures: number;
  last_alert_at: Date | null;
  last_alert_event: string | null;
}

/**
 * Records a tick and returns the failing streak before and after it: an error adds one, a
 * success ends it, a skipped tick (the worker gated off) leaves it as it was. Run it in the
 * transaction that raises any alert, so the streak is read and written under one row lock.
 */
export async function recordTick(
  tx: Queryable,
  t: { name: string; at: Date; outcome: TickOutcome; durationMs: number; error: string | null },
): Promise<{ before: number; after: number }> {
  const [prev] = await tx<{ consecutive_failures: number }[]>`select consecutive_failures from worker_ticks where name = ${t.name} for update`;
  const [row] = await tx<{ consecutive_failures: number }[]>`
    insert into worker_ticks (name, last_tick_at, last_tick_outcome, last_tick_duration_ms, last_error, consecutive_failures)
    values (${t.name}, ${t.at}, ${t.outcome}, ${Math.round(t.durationMs)}, ${t.error}, ${t.outcome === 'error' ? 1 : 0})
    on conflict (name) do update set
      last_tick_at = excluded.last_tick_at, last_tick_outcome = excluded.last_tick_outcome,
      last_tick_duration_ms = excluded.last_tick_duration_ms, last_error = excluded.last_error,
      consecutive_failures = case excluded.last_tick_outcome
        when 'error' then worker_ticks.consecutive_failures + 1
        when 'skipped' then worker_ticks.consecutive_failures
        else 0 end
    returning consecutive_failures`;
  return { before: prev?.consecutive_failures ?? 0, after: row!.consecutive_failures };
}

export async function setLastAlert(tx: Queryable, name: string, at: Date, event: string): Promise<void> {
  await tx`update worker_ticks set last_alert_at = ${at}, last_alert_event = ${event} where name = ${name}`;
}

export async function listTicks(db: Queryable): Promise<TickRow[]> {
  return db<TickRow[]>`
    select name, last_tick_at, last_tick_outcome, last_tick_duration_ms, last_error, consecutive_failures, last_alert_at, last_alert_event
    from worker_ticks order by name`;
}
