// The hit recorder on a thread of its own, with its own PostgreSQL connections: the event loop that answers the
// tracking requests then does not also build each batch's statements, parse its rows and collect their garbage.
import { parentPort, Worker, workerData } from 'node:worker_threads';
import { connect } from '../../shared/db/connection.js';
import type { TrackingConfig } from '../../shared/config/index.js';
import { createLogger, type Logger } from '../../shared/kernel/log.js';
import { HitRecorder, type Hit, type HitOutcome, type HitSink, type RecordOptions, type RecorderOptions } from '../../shared/engagement/tracking/recorder.js';
import { TrafficRules } from '../../shared/engagement/tracking/traffic-rules.js';

export interface RecorderThreadSetup {
  /** PostgreSQL only: the embedded database lives in the main thread and cannot be shared. */
  databaseUrl: string;
  logLevel: string;
  tracking: TrackingConfig;
  options: RecorderOptions;
}

type Request = [id: number, hit: Hit, options: RecordOptions | undefined];
type Reply = [id: number, outcome: HitOutcome | undefined, error: string | undefined];
type ToThread = { hits: Request[] } | { close: true };
type FromThread = { replies: Reply[] } | { closed: true };

interface Waiting {
  resolve(outcome: HitOutcome | 'spooled'): void;
  reject(err: unknown): void;
}

/**
 * Hits cross to the thread in one message per turn of the event loop and their outcomes come back the same way.
 * When the thread fails, the hits it held are rejected (a spool in front records them again), and those not yet
 * handed over and every later one go to `fallback`, a recorder on this thread.
 */
export class ThreadedHitRecorder implements HitSink {
  private worker: Worker | undefined;
  private readonly waiting = new Map<number, Waiting>();
  private outbox: Request[] = [];
  private nextId = 0;
  private failed = false;
  private closed: Promise<void> | undefined;
  private onClosed: (() => void) | undefined;

  constructor(
    private readonly setup: RecorderThreadSetup,
    private readonly log: Logger,
    private readonly fallback: () => HitSink,
  ) {}

  /** Started with the first hit: a process whose API never sees one keeps no thread and no connections for it. */
  private started(): Worker {
    if (this.worker) return this.worker;
    const url = new URL(import.meta.url);
    // Run from source (tsx: benches, development) the thread registers the TypeScript loader before loading this module.
    const load = url.pathname.endsWith('.ts')
      ? `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); })`
      : `import(${JSON.stringify(url.href)})`;
    const worker = new Worker(load, { eval: true, workerData: { recorderThread: this.setup } });
    this.worker = worker;
    worker.on('message', (message: FromThread) => {
      if ('closed' in message) return this.onClosed?.();
      for (const [id, outcome, error] of message.replies) {
        const waiting = this.waiting.get(id);
        this.waiting.delete(id);
        if (error !== undefined) waiting?.reject(new Error(error));
        else waiting?.resolve(outcome!);
      }
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => {
      if (!this.closed) this.fail(new Error(`the hit recorder thread exited (code ${code})`));
      this.onClosed?.();
    });
    return worker;
  }

  record(hit: Hit, options?: RecordOptions): Promise<HitOutcome | 'spooled'> {
    if (this.failed || this.closed) return this.fallback().record(hit, options);
    this.started();
    return new Promise((resolve, reject) => {
      const id = this.nextId++;
      this.waiting.set(id, { resolve, reject });
      if (this.outbox.length === 0) setImmediate(() => this.send());
      this.outbox.push([id, hit, options]);
    });
  }

  /** Waits for the hits handed over to be committed (or to fail), then stops the thread and its connections. */
  close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return (this.closed ??= Promise.resolve());
    return (this.closed ??= new Promise<void>((resolve) => {
      this.onClosed = resolve;
      if (this.failed) return resolve();
      this.send();
      worker.postMessage({ close: true } satisfies ToThread);
    }).then(() => worker.terminate().then(() => undefined)));
  }

  private send(): void {
    if (this.outbox.length === 0 || this.failed || !this.worker) return;
    const hits = this.outbox;
    this.outbox = [];
    this.worker.postMessage({ hits } satisfies ToThread);
  }

  private fail(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.log.error({ err }, 'the hit recorder thread failed; recording on the main thread from now on');
    // Hits not yet handed over are recorded here; those the thread held may or may not be committed: rejected (a
    // spool in front records them again, as replays).
    const unsent = new Map(this.outbox.splice(0).map(([id, hit, options]) => [id, { hit, options }]));
    for (const [id, w] of this.waiting) {
      const hit = unsent.get(id);
      if (hit) this.fallback().record(hit.hit, hit.options).then(w.resolve, w.reject);
      else w.reject(err);
    }
    this.waiting.clear();
  }
}

/** The thread's side: a HitRecorder over a pool of its own; outcomes are sent back once per turn of its event loop. */
function runThread(setup: RecorderThreadSetup): void {
  const port = parentPort!;
  const log = createLogger(setup.logLevel);
  // One connection per batch in flight, and one for the look-ups of a batch committed item by item.
  const sql = connect(setup.databaseUrl, log, { max: setup.options.concurrency + 1 });
  const recorder = new HitRecorder(sql, log, new TrafficRules(setup.tracking), setup.options);
  const pending = new Set<Promise<unknown>>();
  let replies: Reply[] = [];
  const reply = (r: Reply) => {
    if (replies.length === 0) {
      setImmediate(() => {
        const out = replies;
        replies = [];
        port.postMessage({ replies: out } satisfies FromThread);
      });
    }
    replies.push(r);
  };
  port.on('message', (message: ToThread) => {
    if ('close' in message) {
      void Promise.allSettled([...pending])
        .then(() => new Promise((resolve) => setImmediate(resolve)))
        .then(() => sql.end({ timeout: 5 }))
        .finally(() => port.postMessage({ closed: true } satisfies FromThread));
      return;
    }
    for (const [id, hit, options] of message.hits) {
      const done = recorder.record(hit, options).then(
        (outcome) => reply([id, outcome, undefined]),
        (err: unknown) => reply([id, undefined, err instanceof Error ? err.message : String(err)]),
      );
      pending.add(done);
      void done.finally(() => pending.delete(done));
    }
  });
}

const threadSetup = (workerData as { recorderThread?: RecorderThreadSetup } | null)?.recorderThread;
if (parentPort && threadSetup) runThread(threadSetup);
