// SQL for the failed sign-in counters (login_throttles), shared by every process.
import type { Queryable } from '../../db/connection.js';

/** The latest lock among the keys that is still running at `at`, or undefined. */
export async function latestLock(db: Queryable, keys: string[], at: Date): Promise<Date | undefined> {
  const [row] = await db<{ until: Date | null }[]>`
    select max(locked_until) as until from login_throttles where key = any(${keys}::text[]) and locked_until > ${at}`;
  return row?.until ?? undefined;
}

/**
 * Counts one failure for a key and returns the count of its window. A window that started at
 * `staleStart` or earlier has ended: counting starts again at 1. One statement, so concurrent
 * failures all count.
 */
export async function countFailure(db: Queryable, key: string, at: Date, staleStart: Date): Promise<number> {
  const [row] = await db<{ failures: number }[]>`
    insert into login_throttles as t (key, failures, window_started_at) values (${key}, 1, ${at})
    on conflict (key) do update set
      failures = case when t.window_started_at <= ${staleStart} then 1 else t.failures + 1 end,
      window_started_at = case when t.window_started_at <= ${staleStart} then ${at} else t.window_started_at end
    returning failures`;
  return row!.failures;
}

/** Locks a key until `until`, never shortening a longer lock another process set. */
export async function lockUntil(db: Queryable, key: string, until: Date): Promise<void> {
  await db`
    update login_throttles set locked_until = greatest(coalesce(locked_until, ${until}), ${until})
    where key = ${key}`;
}

export async function clearThrottle(db: Queryable, key: string): Promise<void> {
  await db`delete from login_throttles where key = ${key}`;
}

/** Rows whose window and lock have both ended carry nothing any more. */
export async function deleteSpentThrottles(db: Queryable, windowStartedBefore: Date, at: Date): Promise<void> {
  await db`
    delete from login_throttles
    where window_started_at < ${windowStartedBefore} and (locked_until is null or locked_until <= ${at})`;
}
