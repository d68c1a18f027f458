// A durable local log of tracking hits: each hit is appended to a segment file in the data dir and fsynced (many hits
// per fsync) before its request is answered; a segment is deleted once every hit in it is in PostgreSQL. Segments
// a stopped or killed process left are claimed (renamed, so one process wins) and read back for replay.
import { readFileSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Hit } from './recorder.js';

/** A hit with the event id it is stored under, whoever stores it and however often it is replayed. */
export interface SpooledHit {
  id: string;
  hit: Hit;
}

/** One segment file: the hits appended (or read back) and how many of them are in PostgreSQL. */
export class Segment {
  appended = 0;
  settled = 0;
  /** No more hits go in: it is deleted once all of them are settled. */
  sealed = false;
  constructor(
    readonly path: string,
    readonly handle: FileHandle | undefined,
  ) {}
}

const SUFFIX = '.hits';

let spools = 0;

/**
 * An owner token: the process's pid and start time (so a later process that got the same pid is not taken for it),
 * and which of the process's spools (each names its segments apart).
 */
export function processToken(pid: number, instance = 0): string {
  return `${pid}-${processStart(pid) ?? Date.now()}-${instance}`;
}

/** The start time of a process in clock ticks since boot (Linux); undefined without /proc or without the process. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces) start at its closing parenthesis; starttime is field 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote segments under this token (processToken) still runs. */
export function ownerAlive(token: string): boolean {
  const [pidText, start] = token.split('-');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const now = processStart(pid);
  return now === undefined || now === start;
}

function encode({ id, hit }: SpooledHit): string {
  const record = { id, kind: hit.kind, sendId: hit.sendId, url: hit.url, links: hit.links, userAgent: hit.userAgent, ip: hit.ip, at: hit.at.getTime() };
  return `${JSON.stringify(record)}\n`;
}

/** The complete lines of a segment; a last line without its newline was never fsynced whole, so never answered. */
export function decodeSegment(text: string): SpooledHit[] {
  const lines = text.split('\n');
  lines.pop();
  const hits: SpooledHit[] = [];
  for (const line of lines) {
    if (line === '') continue;
    const r = JSON.parse(line) as {
      id: string;
      kind: Hit['kind'];
      sendId: string;
      url?: string;
      links?: number;
      userAgent: string;
      ip: string | null;
      at: number;
    };
    hits.push({ id: r.id, hit: { kind: r.kind, sendId: r.sendId, url: r.url, links: r.links, userAgent: r.userAgent, ip: r.ip, at: new Date(r.at) } });
  }
  return hits;
}

export interface SpoolOptions {
  /** A segment takes this many hits before the next one is started. */
  segmentHits: number;
}

interface Waiting {
  line: string;
  resolve(segment: Segment): void;
  reject(err: unknown): void;
}

export class HitSpool {
  private readonly token = processToken(process.pid, spools++);
  private sequence = 0;
  private current: Segment | undefined;
  private queue: Waiting[] = [];
  /** The write loop, while one runs: appends made meanwhile join its next group. */
  private flushing: Promise<void> | undefined;
  private closed = false;

  private constructor(
    readonly dir: string,
    private readonly options: SpoolOptions,
  ) {}

  static async open(dir: string, options: SpoolOptions): Promise<HitSpool> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return new HitSpool(dir, options);
  }

  /** Resolves with the hit's segment once the hit is on disk (fdatasync); rejects when it could not be written. */
  append(entry: SpooledHit): Promise<Segment> {
    if (this.closed) return Promise.reject(new Error('the hit spool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ line: encode(entry), resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  /** One hit of the segment is in PostgreSQL (or needs nothing there); the segment goes once all of its hits are. */
  settle(segment: Segment): void {
    segment.settled++;
    // A segment that cannot be deleted is claimed and replayed by the next start: its hits are not stored twice.
    this.removeIfDone(segment).catch(() => undefined);
  }

  /**
   * Segments whose owner no longer runs, each renamed to this process first (a rename succeeds for one process
   * only), with the complete hits it holds. Oldest first; at most `limit` segments that hold hits.
   */
  async claimOrphans(limit = Infinity): Promise<{ segment: Segment; hits: SpooledHit[] }[]> {
    const names = (await readdir(this.dir)).filter((n) => n.endsWith(SUFFIX)).sort();
    const claimed: { segment: Segment; hits: SpooledHit[] }[] = [];
    for (const name of names) {
      if (claimed.length >= limit) break;
      if (ownerAlive(name.split('.')[0]!)) continue;
      const path = join(this.dir, this.nextName());
      try {
        await rename(join(this.dir, name), path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue; // another process claimed it first
        throw err;
      }
      const hits = decodeSegment(await readFile(path, 'utf8'));
      const segment = new Segment(path, undefined);
      segment.appended = hits.length;
      segment.sealed = true;
      if (hits.length > 0) claimed.push({ segment, hits });
      else await this.removeIfDone(segment);
    }
    return claimed;
  }

  /** Stops taking hits, lets the last write finish and closes the open segment (deleted if everything in it is settled). */
  async close(): Promise<void> {
    this.closed = true;
    await this.flushing;
    await this.seal();
  }

  private nextName(): string {
    return `${this.token}.${String(this.sequence++).padStart(8, '0')}${SUFFIX}`;
  }

  /** Writes whatever queued while the previous write ran, in one write and one fdatasync. */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      try {
        if (!this.current || this.current.appended >= this.options.segmentHits) await this.rotate();
        const segment = this.current!;
        await segment.handle!.write(group.map((w) => w.line).join(''));
        await segment.handle!.datasync();
        segment.appended += group.length;
        for (const w of group) w.resolve(segment);
      } catch (err) {
        for (const w of group) w.reject(err);
        // The file may end in a partial write: later hits go to a new one.
        await this.seal().catch(() => undefined);
      }
    }
    // Synchronously after the last check of the queue: an append from here on starts a new loop.
    this.flushing = undefined;
  }

  private async rotate(): Promise<void> {
    await this.seal();
    const path = join(this.dir, this.nextName());
    this.current = new Segment(path, await open(path, 'a', 0o600));
  }

  private async seal(): Promise<void> {
    const segment = this.current;
    if (!segment) return;
    this.current = undefined;
    segment.sealed = true;
    await segment.handle?.close();
    await this.removeIfDone(segment);
  }

  private async removeIfDone(segment: Segment): Promise<void> {
    if (!segment.sealed || segment.settled < segment.appended) return;
    await unlink(segment.path).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
  }
}
