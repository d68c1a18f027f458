// Counts API key requests in memory per (key, minute, route, status) and per client address, and writes them in batches.
import type { Queryable } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import { bucketIndex, emptyBuckets } from './activity-histogram.js';
import { upsertActivityMinutes, upsertClientDays, type ClientDayCount, type MinuteCount } from './activity-queries.js';

export interface KeyCall {
  keyId: string;
  /** When: a Date, or epoch milliseconds (the API's per-request path makes no Date). */
  at: Date | number;
  /** Method and route pattern, e.g. "GET /templates/:id". */
  route: string;
  status: number;
  latencyMs: number;
  ip: string | null;
}

/** Past this many distinct pending rows a batch is written at once, bounding memory under a flood of distinct routes or addresses. */
const MAX_PENDING = 5000;
/** A failed batch is kept for the next flush only while the pending set stays this small; beyond, counts are dropped (and logged). */
const MAX_RETAINED = 20_000;

const MINUTE_MS = 60_000;

export class KeyActivityRecorder {
  private minutes = new Map<string, MinuteCount>();
  private clients = new Map<string, ClientDayCount>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  /** Calls still being attributed (a refused request's key is looked up first): a flush waits for them. */
  private readonly attributing = new Set<Promise<unknown>>();
  /** The UTC day (YYYY-MM-DD) of the last minute seen: formatted once per minute, not per request. */
  private lastDay = { minuteMs: NaN, day: '' };

  constructor(
    private readonly db: Queryable,
    private readonly log: Logger,
    private readonly flushIntervalMs: number,
  ) {}

  record(call: KeyCall): void {
    const atMs = typeof call.at === 'number' ? call.at : call.at.getTime();
    const minuteMs = Math.floor(atMs / MINUTE_MS) * MINUTE_MS;
    const mKey = `${call.keyId}|${minuteMs}|${call.status}|${call.route}`;
    let m = this.minutes.get(mKey);
    if (!m) {
      m = { keyId: call.keyId, minute: new Date(minuteMs), route: call.route, status: call.status, count: 0, latencyMsSum: 0, buckets: emptyBuckets() };
      this.minutes.set(mKey, m);
    }
    m.count++;
    m.latencyMsSum += call.latencyMs;
    m.buckets[bucketIndex(call.latencyMs)]!++;
    if (call.ip) {
      const day = this.dayOf(minuteMs);
      const cKey = `${call.keyId}|${day}|${call.ip}`;
      const c = this.clients.get(cKey);
      if (c) {
        c.count++;
        // The entry's own Date (made below), so moved in place rather than replaced per request.
        if (atMs > c.lastSeen.getTime()) c.lastSeen.setTime(atMs);
      } else {
        this.clients.set(cKey, { keyId: call.keyId, day, ip: call.ip, count: 1, lastSeen: new Date(atMs) });
      }
    }
    if (this.minutes.size + this.clients.size >= MAX_PENDING) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushIntervalMs);
      this.timer.unref();
    }
  }

  private dayOf(minuteMs: number): string {
    if (this.lastDay.minuteMs !== minuteMs) this.lastDay = { minuteMs, day: new Date(minuteMs).toISOString().slice(0, 10) };
    return this.lastDay.day;
  }

  /** Requests of a key recorded here but not yet written, at or after `since`: rate-limit-status adds them to the stored counts. */
  pendingSince(keyId: string, since: Date): number {
    let n = 0;
    for (const m of this.minutes.values()) if (m.keyId === keyId && m.minute >= since) n += m.count;
    return n;
  }

  /**
   * Records a call once `attribution` settles (to the call, or to null when it is no key's), and has every flush begun
   * meanwhile wait for it: "flush" then means every request answered so far, refused ones included, is written.
   */
  recordLater(attribution: Promise<KeyCall | null>): Promise<void> {
    const done = attribution.then((call) => {
      if (call) this.record(call);
    });
    this.attributing.add(done);
    return done.finally(() => this.attributing.delete(done));
  }

  /** Writes everything recorded so far; resolves once it is stored (or given up). Batches never overlap. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const waitFor = [...this.attributing];
    this.flushing = this.flushing.then(() => Promise.allSettled(waitFor)).then(() => this.writeBatch());
    return this.flushing;
  }

  async close(): Promise<void> {
    await this.flush();
  }

  private async writeBatch(): Promise<void> {
    const minutes = this.minutes;
    const clients = this.clients;
    if (minutes.size === 0 && clients.size === 0) return;
    this.minutes = new Map();
    this.clients = new Map();
    try {
      await upsertActivityMinutes(this.db, [...minutes.values()]);
    } catch (err) {
      this.retain(minutes, this.minutes, err);
    }
    try {
      await upsertClientDays(this.db, [...clients.values()]);
    } catch (err) {
      this.retain(clients, this.clients, err);
    }
  }

  /** Puts a failed batch back (merged with what arrived meanwhile) so a database hiccup loses nothing, within a memory bound. */
  private retain<T extends { count: number }>(failed: Map<string, T>, current: Map<string, T>, err: unknown): void {
    if (failed.size + current.size > MAX_RETAINED) {
      this.log.warn({ err, dropped: failed.size }, 'could not record API key activity; counts dropped');
      return;
    }
    this.log.warn({ err }, 'could not record API key activity; retrying with the next batch');
    for (const [key, row] of failed) {
      const now = current.get(key);
      if (!now) current.set(key, row);
      else mergeInto(now, row);
    }
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushIntervalMs);
      this.timer.unref();
    }
  }
}

function mergeInto<T extends { count: number }>(target: T, extra: T): void {
  target.count += extra.count;
  const t = target as unknown as Partial<MinuteCount & ClientDayCount>;
  const e = extra as unknown as Partial<MinuteCount & ClientDayCount>;
  if (t.latencyMsSum !== undefined && e.latencyMsSum !== undefined) t.latencyMsSum += e.latencyMsSum;
  if (t.buckets && e.buckets) e.buckets.forEach((n, i) => (t.buckets![i] = (t.buckets![i] ?? 0) + n));
  if (t.lastSeen && e.lastSeen && e.lastSeen > t.lastSeen) t.lastSeen = e.lastSeen;
}
