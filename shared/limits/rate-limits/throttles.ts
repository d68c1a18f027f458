// Remembers the requests the rate limiter refused, per tenant and minute, and writes them in batches with the limiter's sync, for GET /admin/ratelimits.
import type { Queryable } from '../../db/connection.js';
import { addThrottles, type ThrottleDelta } from './queries.js';

const MINUTE_MS = 60_000;

interface Entry {
  tenantId: string;
  minuteStart: number;
  count: number;
  lastAt: number;
}

/**
 * A refusal costs a map update in memory; the counts reach PostgreSQL with the limiter's next sync
 * (every sync_interval_ms), so a flood of 429s never adds a write per request.
 */
export class ThrottleLog {
  /** Each tenant's count of the minute it was last refused in: one map look-up per refusal, no string building. */
  private readonly current = new Map<string, Entry>();
  /** Minutes a tenant moved on from before the flush. */
  private closed: Entry[] = [];

  record(tenantId: string, atMs: number): void {
    const minuteStart = atMs - (atMs % MINUTE_MS);
    const entry = this.current.get(tenantId);
    if (entry && entry.minuteStart === minuteStart) {
      entry.count++;
      if (atMs > entry.lastAt) entry.lastAt = atMs;
      return;
    }
    if (entry) this.closed.push(entry);
    // A bound on memory if the database is unreachable for long: the oldest minutes matter least.
    if (this.current.size >= 10_000 && !entry) this.current.delete(this.current.keys().next().value!);
    if (this.closed.length > 10_000) this.closed.shift();
    this.current.set(tenantId, { tenantId, minuteStart, count: 1, lastAt: atMs });
  }

  /** Writes what was recorded since the last flush; on failure the counts stay for the next one. */
  async flush(db: Queryable): Promise<void> {
    if (this.current.size === 0 && this.closed.length === 0) return;
    const batch = [...this.closed, ...this.current.values()];
    this.closed = [];
    this.current.clear();
    // One row per (tenant, minute): an entry put back by a failed flush may share its key with a newer one.
    const merged = new Map<string, ThrottleDelta>();
    for (const e of batch) {
      const key = `${e.tenantId}|${e.minuteStart}`;
      const m = merged.get(key);
      if (m) {
        m.count += e.count;
        if (e.lastAt > m.lastAt.getTime()) m.lastAt = new Date(e.lastAt);
      } else merged.set(key, { tenantId: e.tenantId, minuteStart: new Date(e.minuteStart), count: e.count, lastAt: new Date(e.lastAt) });
    }
    const deltas = [...merged.values()];
    try {
      await addThrottles(db, deltas);
    } catch (err) {
      // Back for the next flush; refusals recorded meanwhile stay apart (the insert adds rows of one key up).
      this.closed.push(...batch);
      throw err;
    }
  }
}
