// Remembers the requests the rate limiter refused, per tenant and minute, and writes them in batches with the limiter's sync, for GET /admin/ratelimits.
import type { Queryable } from '../db/connection.js';
import { addThrottles, type ThrottleDelta } from './queries.js';

const MINUTE_MS = 60_000;

/**
 * A refusal costs a map update in memory; the counts reach PostgreSQL with the limiter's next sync
 * (every sync_interval_ms), so a flood of 429s never adds a write per request.
 */
export class ThrottleLog {
  /** `tenantId|minuteStartMs` → pending count and last refusal (ms). */
  private readonly pending = new Map<string, { tenantId: string; minuteStart: number; count: number; lastAt: number }>();

  record(tenantId: string, atMs: number): void {
    const minuteStart = Math.floor(atMs / MINUTE_MS) * MINUTE_MS;
    const key = `${tenantId}|${minuteStart}`;
    const entry = this.pending.get(key);
    if (entry) {
      entry.count++;
      entry.lastAt = Math.max(entry.lastAt, atMs);
    } else {
      // A bound on memory if the database is unreachable for long: the oldest minutes matter least.
      if (this.pending.size >= 10_000) this.pending.delete(this.pending.keys().next().value!);
      this.pending.set(key, { tenantId, minuteStart, count: 1, lastAt: atMs });
    }
  }

  /** Writes what was recorded since the last flush; on failure the counts stay for the next one. */
  async flush(db: Queryable): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = [...this.pending.values()];
    this.pending.clear();
    const deltas: ThrottleDelta[] = batch.map((e) => ({ tenantId: e.tenantId, minuteStart: new Date(e.minuteStart), count: e.count, lastAt: new Date(e.lastAt) }));
    try {
      await addThrottles(db, deltas);
    } catch (err) {
      for (const e of batch) {
        const key = `${e.tenantId}|${e.minuteStart}`;
        const now = this.pending.get(key);
        if (now) {
          now.count += e.count;
          now.lastAt = Math.max(now.lastAt, e.lastAt);
        } else this.pending.set(key, e);
      }
      throw err;
    }
  }
}
