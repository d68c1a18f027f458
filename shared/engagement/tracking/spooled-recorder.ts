// Tracking hits answered once they are durable on local disk, written to PostgreSQL right behind the answer: the
// request no longer waits for a batch's two round trips through the database, and a database outage or failover
// loses no hit (the spool keeps it until it is stored, across restarts).
import { uuidV7 } from '../../db/uuid-v7.js';
import type { Logger } from '../../kernel/log.js';
import type { HitSpool, Segment, SpooledHit } from './hit-spool.js';
import type { Hit, HitOutcome, HitSink, RecordOptions } from './recorder.js';

export interface SpooledRecorderOptions {
  /**
   * At most this many spooled hits wait for PostgreSQL; beyond it a hit is answered only after its own commit, as
   * without the spool (memory stays bounded while the database is slow or away).
   */
  maxPending: number;
  /** Hits PostgreSQL refused are tried again after this long, doubling up to a minute. */
  retryMs: number;
  /** How often segments left by a process that stopped are looked for (and at start). */
  orphanScanMs: number;
}

interface Entry extends SpooledHit {
  segment: Segment;
}

export class SpooledHitRecorder implements HitSink {
  private pending = 0;
  private failed: Entry[] = [];
  private retryDelay: number;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly scanTimer: NodeJS.Timeout;
  private scanning: Promise<void> | undefined;
  private closing = false;
  /** A replay stopped at maxPending: the rest is claimed once the hits in hand are stored. */
  private orphansLeft = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly spool: HitSpool,
    private readonly recorder: HitSink,
    private readonly log: Logger,
    private readonly options: SpooledRecorderOptions,
  ) {
    this.retryDelay = options.retryMs;
    this.scanTimer = setInterval(() => void this.replayOrphans(), options.orphanScanMs);
    this.scanTimer.unref();
    void this.replayOrphans();
  }

  async record(hit: Hit, options?: RecordOptions): Promise<HitOutcome | 'spooled'> {
    if (this.closing || this.pending >= this.options.maxPending) return this.recorder.record(hit, options);
    const id = options?.eventId ?? uuidV7(hit.at.getTime());
    const replay = options?.replay ?? false;
    let segment: Segment;
    try {
      segment = await this.spool.append({ id, hit });
    } catch (err) {
      this.log.warn({ err }, 'tracking hit not spooled; recording it directly');
      return this.recorder.record(hit, { eventId: id, replay });
    }
    this.store({ id, hit, segment }, replay);
    return 'spooled';
  }

  /** Resolves when no spooled hit waits for PostgreSQL (tests, and shutdown). */
  idle(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Waits up to `timeoutMs` for the spooled hits to be stored, then closes the spool: what is still unstored stays in
   * its segment for the next start to replay.
   */
  async close(timeoutMs = 10_000): Promise<void> {
    this.closing = true;
    clearInterval(this.scanTimer);
    await this.scanning;
    if (this.failed.length > 0) this.retry();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.idle(), new Promise((resolve) => (timer = setTimeout(resolve, timeoutMs)))]);
    clearTimeout(timer);
    clearTimeout(this.retryTimer);
    this.failed = [];
    if (this.pending > 0) this.log.warn({ pending: this.pending }, 'tracking hits left in the spool for the next start');
    await this.spool.close();
    await this.recorder.close();
  }

  private store(entry: Entry, replay: boolean): void {
    this.pending++;
    this.recorder.record(entry.hit, { eventId: entry.id, replay }).then(
      () => this.settled(entry),
      (err: unknown) => {
        // Closed meanwhile: the hit stays in its segment for the next start.
        if (this.closing) return;
        this.log.warn({ err }, 'spooled tracking hit not stored yet; trying again');
        this.failed.push(entry);
        // One retry round for every hit refused meanwhile; the delay doubles per round, not per hit.
        if (this.retryTimer) return;
        this.retryTimer = setTimeout(() => this.retry(), this.retryDelay);
        this.retryDelay = Math.min(this.retryDelay * 2, 60_000);
      },
    );
  }

  private settled(entry: Entry): void {
    this.pending--;
    this.retryDelay = this.options.retryMs;
    this.spool.settle(entry.segment);
    if (this.pending > 0) return;
    for (const wake of this.idleWaiters.splice(0)) wake();
    if (this.orphansLeft) void this.replayOrphans();
  }

  /** Hits refused before, again, as replays: the commit that failed may have gone through with its reply lost. */
  private retry(): void {
    this.retryTimer = undefined;
    const entries = this.failed.splice(0);
    this.pending -= entries.length;
    for (const entry of entries) this.store(entry, true);
  }

  /**
   * Claims segments of stopped processes one at a time while fewer than maxPending hits wait: a long outage's
   * backlog is not read into memory at once. What is left is claimed when the hits in hand are stored.
   */
  private replayOrphans(): Promise<void> {
    if (this.closing) return Promise.resolve();
    return (this.scanning ??= (async () => {
      this.orphansLeft = false;
      while (!this.closing) {
        if (this.pending >= this.options.maxPending) {
          this.orphansLeft = true;
          break;
        }
        const [claimed] = await this.spool.claimOrphans(1);
        if (!claimed) break;
        this.log.info({ segment: claimed.segment.path, hits: claimed.hits.length }, 'replaying tracking hits spooled by a process that stopped');
        for (const spooled of claimed.hits) this.store({ ...spooled, segment: claimed.segment }, true);
      }
    })()
      .catch((err: unknown) => this.log.error({ err }, 'spooled tracking hits of a stopped process could not be read'))
      .finally(() => (this.scanning = undefined)));
  }
}
