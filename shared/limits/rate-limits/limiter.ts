// Sliding-window rate limiting whose counts are shared through PostgreSQL by every Mailpath process.
//
// Counts are kept per fixed window (one row per bucket and window in rate_limit_counters), and a request is
// weighed against a window sliding over the last `windowSeconds`: the previous window's count weighted by how
// much of it the sliding window still covers, plus the current window's count (the sliding-window counter).
// A request is admitted while that count is below the limit.
//
// The count assumes the previous window's requests were spread evenly over it. So in a span of d seconds
// (d ≤ the window) that crosses a window edge, at most limit + ⌈limit × e / window⌉ requests are admitted, e
// being the part of the span after the edge (within a window: the limit): a burst across the edge gets the
// limit plus what the previous window gave back meanwhile, rounded up: 120 requests in 1.4 s against 60/min
// get 61, where fixed windows admitted all 120. The worst case over a full window is a client that spends its
// whole allowance in the last instant of one window and then keeps sending: the sliding count frees one
// request per window/limit seconds, as a token bucket of `limit` would, so up to twice the limit in the
// window after that instant. A client sending steadily gets the limit per window.
//
// Each process counts locally and syncs deltas every `syncIntervalMs`; the first request of a bucket's
// window in a process reads the global counts (current and previous window) first. So one process is exact,
// and several together can overshoot a limit only by what the others admitted since their last sync.
import type { Queryable } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { addToCounters, counterKey, deleteExpiredCounters, readCounters, type CounterDelta } from './counters.js';
import { deleteExpiredThrottles } from './queries.js';
import { ThrottleLog } from './throttles.js';

export interface Bucket {
  /** Stable identity, e.g. `key:<id>:read` or `tenant:<id>:sec`. */
  id: string;
  limit: number;
  windowSeconds: number;
}

export interface BucketState {
  bucket: Bucket;
  /** Requests in the sliding window (the weighted count, rounded down: a share of the previous window counts once it makes a whole request). */
  count: number;
  remaining: number;
  /**
   * Seconds until `remaining` goes up by one (at least 1): with nothing remaining, until the next request
   * would be admitted (the Retry-After of a refusal).
   */
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
  /** The global count has been read in (a window is read once, on this process's first sight of it). */
  read: boolean;
}

/** A bucket's current window and the one before it, which the sliding window still partly covers. */
interface Slide {
  current: WindowCounter;
  previous: WindowCounter;
  /** Window length (ms). */
  span: number;
  /** How far into the current window `now` is (ms), 0 ≤ elapsed < span. */
  elapsed: number;
}

/** How long windows are kept before deletion: the longest window (a day) and the one before it, which still weighs. */
const RETENTION_MS = 2 * 86_400_000;
/** Refusals are kept an hour: GET /admin/ratelimits looks back 5 minutes. */
const THROTTLE_RETENTION_MS = 3_600_000;

const total = (w: WindowCounter) => w.synced + w.pending;

/** The sliding count scaled by the span (integers: exact comparisons, no float rounding at the edges). */
function weighted(s: Slide): number {
  return total(s.previous) * (s.span - s.elapsed) + total(s.current) * s.span;
}

export class RateLimiter {
  /** bucket id → window start (ms) → counter. Numeric inner keys keep the per-request path free of string building. */
  private readonly counters = new Map<string, Map<number, WindowCounter>>();
  private readonly firstReads = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<void> | undefined;
  private lastCleanup = 0;
  /** Refused requests per tenant, written with each sync (GET /admin/ratelimits). */
  private readonly throttles = new ThrottleLog();

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

  /**
   * Counts one request against every bucket, unless one of them is already full (then nothing is counted).
   * A refusal of a tenant's request (`tenantId` given) is remembered for the operators' throttle view.
   */
  async hit(buckets: Bucket[], tenantId?: string): Promise<Decision> {
    const now = this.now();
    const slides = this.slidesFor(buckets, now);
    const unread = slides.filter((s) => !s.current.read);
    if (unread.length > 0) await Promise.all(unread.map((s) => this.readThrough(s)));
    return this.decide(slides, now, tenantId);
  }

  /**
   * As hit(), without a promise, when this process has already read every window involved (all but a bucket's
   * first request in a window): the request guard's common case. Undefined (nothing counted) means call hit().
   */
  hitIfRead(buckets: Bucket[], tenantId?: string): Decision | undefined {
    const now = this.now();
    const slides = this.slidesFor(buckets, now);
    for (const s of slides) if (!s.current.read) return undefined;
    return this.decide(slides, now, tenantId);
  }

  private slidesFor(buckets: Bucket[], now: number): Slide[] {
    const slides: Slide[] = new Array(buckets.length);
    for (let i = 0; i < buckets.length; i++) slides[i] = this.slideFor(buckets[i]!, now);
    return slides;
  }

  private decide(slides: Slide[], now: number, tenantId: string | undefined): Decision {
    let full: Slide | undefined;
    for (const s of slides) {
      if (weighted(s) >= s.current.bucket.limit * s.span) {
        full = s;
        break;
      }
    }
    if (!full) for (const s of slides) s.current.pending++;
    else if (tenantId !== undefined) this.throttles.record(tenantId, now);
    return { allowed: !full, reported: stateOf(full ?? slides[0]!) };
  }

  /** Current state of a bucket without counting a request. */
  async peek(bucket: Bucket): Promise<BucketState> {
    const slide = this.slideFor(bucket, this.now());
    if (!slide.current.read) await this.readThrough(slide);
    return stateOf(slide);
  }

  private slideFor(bucket: Bucket, now: number): Slide {
    const span = bucket.windowSeconds * 1000;
    const start = Math.floor(now / span) * span;
    let windows = this.counters.get(bucket.id);
    if (!windows) {
      windows = new Map();
      this.counters.set(bucket.id, windows);
    }
    return { current: windowIn(windows, bucket, start), previous: windowIn(windows, bucket, start - span), span, elapsed: now - start };
  }

  /** First sight of a window in this process: learn what other processes already counted in it and the one before. */
  private readThrough(s: Slide): Promise<void> {
    const key = counterKey(s.current.bucket.id, s.current.windowStart);
    let read = this.firstReads.get(key);
    if (!read) {
      const windows = s.previous.read ? [s.current] : [s.current, s.previous];
      read = readCounters(
        this.db,
        windows.map((w) => ({ bucket: w.bucket.id, windowStart: new Date(w.windowStart) })),
      )
        .then((counts) => {
          for (const w of windows) {
            w.synced = Math.max(w.synced, counts.get(counterKey(w.bucket.id, w.windowStart)) ?? 0);
            w.read = true;
          }
        })
        .finally(() => this.firstReads.delete(key));
      this.firstReads.set(key, read);
    }
    return read;
  }

  /** Pushes local counts and pulls other processes' counts for every window that still counts. */
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
        const end = w.windowStart + w.bucket.windowSeconds * 1000;
        // A window weighs in until the window after it has ended too.
        if (end + w.bucket.windowSeconds * 1000 <= now && w.pending === 0) windows.delete(start);
        // Others' counts for a window that ended a few syncs ago are all in: no need to pull them again.
        else if (w.read && (w.pending > 0 || end + 2 * this.syncIntervalMs > now)) live.push(w);
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
          const global = counts.get(counterKey(w.bucket.id, w.windowStart));
          if (global !== undefined) w.synced = global;
        });
      } catch (err) {
        // Counts stay pending and go out with the next sync.
        this.log.warn({ err }, 'rate-limit sync failed');
      }
    }
    await this.throttles.flush(this.db).catch((err) => this.log.warn({ err }, 'rate-limit refusals not recorded yet'));
    if (now - this.lastCleanup > 60_000) {
      this.lastCleanup = now;
      await deleteExpiredCounters(this.db, new Date(now - RETENTION_MS)).catch((err) => this.log.warn({ err }, 'rate-limit counter cleanup failed'));
      await deleteExpiredThrottles(this.db, new Date(now - THROTTLE_RETENTION_MS)).catch((err) => this.log.warn({ err }, 'rate-limit refusal cleanup failed'));
    }
  }
}

function windowIn(windows: Map<number, WindowCounter>, bucket: Bucket, start: number): WindowCounter {
  let w = windows.get(start);
  if (!w) {
    w = { bucket, windowStart: start, synced: 0, pending: 0, read: false };
    windows.set(start, w);
  } else {
    w.bucket = bucket; // limits may have changed (tenant override)
  }
  return w;
}

function stateOf(s: Slide): BucketState {
  const limit = s.current.bucket.limit;
  const count = Math.floor(weighted(s) / s.span);
  const remaining = Math.max(0, limit - count);
  return { bucket: s.current.bucket, count, remaining, resetSeconds: Math.max(1, Math.ceil(msUntilMore(s, limit - remaining) / 1000)) };
}

/**
 * Milliseconds until the sliding count is below `below` (one request freed), with no further requests: first the
 * previous window's share slides out, then, past the current window's end, this one's.
 */
function msUntilMore(s: Slide, below: number): number {
  const { span, elapsed } = s;
  const p = total(s.previous);
  const c = total(s.current);
  if (below <= 0) return span - elapsed; // nothing counted: the whole allowance is there already
  if (c < below && p > 0) {
    // p·(span − x) + c·span < below·span  ⇔  x > span − (below − c)·span / p
    return Math.max(1, Math.floor(span - ((below - c) * span) / p) + 1 - elapsed);
  }
  if (c === 0) return span - elapsed; // not reached: with nothing counted here and before, nothing is to be freed
  // In the next window (y into it): c·(span − y) < below·span  ⇔  y > span − below·span / c
  return span - elapsed + Math.floor(span - (below * span) / c) + 1;
}
