// Fixed-window rate limiting whose counts are shared through PostgreSQL by every Mailpath process.
//
// Each process counts locally and syncs deltas every `syncIntervalMs`; the first request of a bucket's
// window in a process reads the global count first. So one process is exact, and several together
// can overshoot a limit only by what the others admitted since their last sync (one interval).
import type { Queryable } from '../db/connection.js';
import type { Logger } from '../log.js';
import { addToCounters, deleteExpiredCounters, type CounterDelta } from './counters.js';

export interface Bucket {
  /** Stable identity, e.g. `key:<id>:read` or `tenant:<id>:sec`. */
  id: string;
  limit: number;
  windowSeconds: number;
}

export interface BucketState {
  bucket: Bucket;
  count: number;
  remaining: number;
  /** Seconds until the window ends (at least 1). */
  resetSeconds: number;
}

export interface Decision {
  allowed: boolean;
  /** The bucket whose state the response headers report: the denying one, else the first. */
  reported: BucketState;
}

interface WindowCounter {
  bucket: Bucket;
  windowStart: number;
  synced: number;
  pending: number;
  lastHit: number;
}

/** How long expired windows are kept before deletion (longest window plus a day). */
const RETENTION_MS = 2 * 86_400_000;

export class RateLimiter {
  /** bucket id → window start (ms) → counter. Numeric inner keys keep the per-request path free of string building. */
  private readonly counters = new Map<string, Map<number, WindowCounter>>();
  private readonly firstReads = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private lastCleanup = 0;

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    private readonly syncIntervalMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.sync(), this.syncIntervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sync();
  }

  /** Counts one request against every bucket, unless one of them is already full (then nothing is counted). */
  async hit(buckets: Bucket[]): Promise<Decision> {
    const now = this.now();
    const windows = buckets.map((b) => this.windowFor(b, now));
    const unread = windows.filter((w) => w.lastHit === 0);
    if (unread.length > 0) await Promise.all(unread.map((w) => this.readThrough(w)));
    for (const w of windows) w.lastHit = now;
    const full = windows.find((w) => w.synced + w.pending >= w.bucket.limit);
    if (!full) for (const w of windows) w.pending++;
    return { allowed: !full, reported: this.stateOf(full ?? windows[0]!, now) };
  }

  /** Current state of a bucket without counting a request. */
  async peek(bucket: Bucket): Promise<BucketState> {
    const now = this.now();
    const w = this.windowFor(bucket, now);
    if (w.lastHit === 0) {
      await this.readThrough(w);
      w.lastHit = now;
    }
    return this.stateOf(w, now);
  }

  private stateOf(w: WindowCounter, now: number): BucketState {
    const count = w.synced + w.pending;
    const end = w.windowStart + w.bucket.windowSeconds * 1000;
    return {
      bucket: w.bucket,
      count,
      remaining: Math.max(0, w.bucket.limit - count),
      resetSeconds: Math.max(1, Math.ceil((end - now) / 1000)),
    };
  }

  private windowFor(bucket: Bucket, now: number): WindowCounter {
    const span = bucket.windowSeconds * 1000;
    const windowStart = Math.floor(now / span) * span;
    let windows = this.counters.get(bucket.id);
    if (!windows) {
      windows = new Map();
      this.counters.set(bucket.id, windows);
    }
    let w = windows.get(windowStart);
    if (!w) {
      w = { bucket, windowStart, synced: 0, pending: 0, lastHit: 0 };
      windows.set(windowStart, w);
    } else {
      w.bucket = bucket; // limits may have changed (tenant override)
    }
    return w;
  }

  /** First sight of a window in this process: learn what other processes already counted. */
  private readThrough(w: WindowCounter): Promise<void> {
    const key = `${w.bucket.id}|${w.windowStart}`;
    let read = this.firstReads.get(key);
    if (!read) {
      read = addToCounters(this.db, [{ bucket: w.bucket.id, windowStart: new Date(w.windowStart), windowSeconds: w.bucket.windowSeconds, delta: 0 }])
        .then((counts) => {
          w.synced = Math.max(w.synced, counts.get(key) ?? 0);
        })
        .finally(() => this.firstReads.delete(key));
      this.firstReads.set(key, read);
    }
    return read;
  }

  /** Pushes local counts and pulls other processes' counts for every live window. */
  async sync(): Promise<void> {
    if (this.syncing) return this.syncing;
    this.syncing = this.doSync().finally(() => (this.syncing = undefined));
    return this.syncing;
  }

  private async doSync(): Promise<void> {
    const now = this.now();
    const live: WindowCounter[] = [];
    for (const [id, windows] of this.counters) {
      for (const [start, w] of windows) {
        const ended = w.windowStart + w.bucket.windowSeconds * 1000 <= now;
        if (ended && w.pending === 0) windows.delete(start);
        else if (w.lastHit > 0) live.push(w);
      }
      if (windows.size === 0) this.counters.delete(id);
    }
    if (live.length > 0) {
      const sent = live.map((w) => w.pending);
      const deltas: CounterDelta[] = live.map((w, i) => ({
        bucket: w.bucket.id,
        windowStart: new Date(w.windowStart),
        windowSeconds: w.bucket.windowSeconds,
        delta: sent[i]!,
      }));
      try {
        const counts = await addToCounters(this.db, deltas);
        live.forEach((w, i) => {
          w.pending -= sent[i]!;
          const global = counts.get(`${w.bucket.id}|${w.windowStart}`);
          if (global !== undefined) w.synced = global;
        });
      } catch (err) {
        // Counts stay pending and go out with the next sync.
        this.log.warn({ err }, 'rate-limit sync failed');
      }
    }
    if (now - this.lastCleanup > 60_000) {
      this.lastCleanup = now;
      await deleteExpiredCounters(this.db, new Date(now - RETENTION_MS)).catch((err) =>
        this.log.warn({ err }, 'rate-limit counter cleanup failed'),
      );
    }
  }
}
