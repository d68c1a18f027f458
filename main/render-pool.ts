// The process's render threads (piscina): tenants' Liquid jobs run there, never on the event loop; tenants take turns for the threads, and a job past its
// deadline is stopped by ending its thread.
import { availableParallelism } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Piscina } from 'piscina';
import type { RenderConfig } from '../shared/config/index.js';
import type { Logger } from '../shared/kernel/log.js';
import {
  overBudget,
  renderBusy,
  type ItemOutcome,
  type RenderJob,
  type RenderOptions,
  type RenderReport,
  type TemplateRenderer,
} from '../shared/sending/templates/renderer.js';
import type { RenderAnswer, RenderTask } from './render-thread.js';

/** Jobs of one tenant: how many run, and those waiting in arrival order. */
interface TenantLane {
  running: number;
  waiting: (() => void)[];
}

/** The thread module beside this one: compiled .js, or the .ts source under tsx (whose loader the threads inherit through execArgv). */
function threadModule(): string {
  const here = new URL(import.meta.url);
  return new URL(here.pathname.endsWith('.ts') ? './render-thread.ts' : './render-thread.js', here).href;
}

/** Slot 2 of a job's progress buffer: set by the thread when it begins the job (the deadline counts from there). */
const STARTED = 2;
const START_POLL_MS = 20;

export class RenderPool implements TemplateRenderer {
  private readonly pool: Piscina<RenderTask, RenderAnswer>;
  readonly threads: number;
  private running = 0;
  private readonly lanes = new Map<string, TenantLane>();
  /** Tenants with waiting jobs, in the order they get their next turn. */
  private readonly turns: string[] = [];
  /** Set by tests: called with each answer (it tells on which thread the job ran). */
  onAnswer: ((answer: RenderAnswer) => void) | undefined;

  constructor(
    private readonly config: RenderConfig,
    private readonly log: Logger,
  ) {
    this.threads = config.threads > 0 ? config.threads : Math.max(1, availableParallelism() - 1);
    this.pool = new Piscina<RenderTask, RenderAnswer>({
      filename: threadModule(),
      name: 'default',
      // Started with the first render: a process that never renders keeps no threads.
      minThreads: 0,
      maxThreads: this.threads,
      idleTimeout: 60_000,
      niceIncrement: config.thread_nice,
      resourceLimits: { maxOldGenerationSizeMb: config.thread_heap_mb },
    });
  }

  async render(job: RenderJob, options: RenderOptions = {}): Promise<RenderReport> {
    const lane = this.laneOf(job.tenantId);
    if (this.running >= this.threads || lane.running >= this.config.per_tenant_running) {
      if (options.shed && lane.waiting.length >= this.config.per_tenant_queued) throw renderBusy(this.config.retry_after_seconds);
      // next() takes the slot for this job before waking it.
      await new Promise<void>((resolve) => {
        lane.waiting.push(resolve);
        if (lane.waiting.length === 1) this.turns.push(job.tenantId);
      });
    } else {
      this.running++;
      lane.running++;
    }
    try {
      return await this.run(job);
    } finally {
      this.running--;
      lane.running--;
      this.next();
      if (lane.running === 0 && lane.waiting.length === 0) this.lanes.delete(job.tenantId);
    }
  }

  /** Hands free threads to waiting jobs, one tenant after another (a tenant at its running cap is passed over). */
  private next(): void {
    let passed = 0;
    while (this.running < this.threads && passed < this.turns.length) {
      const tenantId = this.turns.shift()!;
      const lane = this.lanes.get(tenantId)!;
      if (lane.running >= this.config.per_tenant_running) {
        this.turns.push(tenantId);
        passed++;
        continue;
      }
      passed = 0;
      const wake = lane.waiting.shift()!;
      if (lane.waiting.length > 0) this.turns.push(tenantId);
      this.running++;
      lane.running++;
      wake();
    }
  }

  private laneOf(tenantId: string): TenantLane {
    let lane = this.lanes.get(tenantId);
    if (!lane) this.lanes.set(tenantId, (lane = { running: 0, waiting: [] }));
    return lane;
  }

  /** Runs a job on a thread; past its budget and the grace the thread is ended and every item fails over budget. */
  private async run(job: RenderJob): Promise<RenderReport> {
    const progress = new SharedArrayBuffer(3 * Int32Array.BYTES_PER_ELEMENT);
    const at = new Int32Array(progress);
    at[1] = -1;
    const stop = new AbortController();
    const watch = this.watch(at, job.budgetMs + this.config.deadline_grace_ms, stop);
    try {
      const answer = await this.pool.run({ job, progress }, { signal: stop.signal });
      this.onAnswer?.(answer);
      return { items: answer.items, elapsedMs: answer.elapsedMs };
    } catch (err) {
      const stopped = stop.signal.aborted;
      const outOfMemory = (err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY';
      // Anything else (the thread module failed to load) is the platform's failure, not the template's.
      if (!stopped && !outOfMemory) throw err;
      const field = (job.sources[at[1]!] ?? job.sources[0])?.field ?? 'template';
      this.log.warn(
        { tenantId: job.tenantId, field, budgetMs: job.budgetMs },
        stopped ? 'a render job passed its deadline: its thread was ended' : 'a render job ran out of memory: its thread ended',
      );
      const failed: ItemOutcome = stopped
        ? overBudget(field, job.budgetMs)
        : { ...overBudget(field, job.budgetMs), message: `${field}: rendering needed more memory than a render may use and was stopped` };
      return { items: job.items.map(() => failed), elapsedMs: job.budgetMs };
    } finally {
      watch.cancel();
    }
  }

  /** Aborts the job `deadlineMs` after its thread began it (a thread being started does not count). */
  private watch(at: Int32Array, deadlineMs: number, stop: AbortController): { cancel(): void } {
    const done = new AbortController();
    void (async () => {
      while (Atomics.load(at, STARTED) === 0) await sleep(START_POLL_MS, undefined, { signal: done.signal });
      await sleep(deadlineMs, undefined, { signal: done.signal });
      stop.abort(new Error('deadline'));
    })().catch(() => undefined);
    return { cancel: () => done.abort() };
  }

  async close(): Promise<void> {
    await this.pool.close({ force: true });
  }
}
