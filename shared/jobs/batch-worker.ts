// Works a pg-boss job queue in batches for a role: a failed job runs again on its own, a full batch fetches again at once, and stop() waits for the batches
// in hand.
import type { Job } from 'pg-boss';
import type { Logger } from '../kernel/log.js';
import type { Boss } from './boss.js';

// pg-boss refuses to poll more often than this.
const MIN_POLL_SECONDS = 0.5;

/** Runs one job's work; a throw marks only that job failed, so pg-boss retries it and completes the rest of the batch. */
export type RunJob<T> = (job: Job<T>, work: () => Promise<unknown>) => Promise<void>;

export interface BatchWorkerOptions<T> {
  boss: Boss;
  queue: string;
  /** Names the worker in its log lines. */
  name: string;
  log: Logger;
  batchSize: number;
  pollIntervalMs: number;
  /** Parallel fetchers: pg-boss waits for a whole batch before fetching the next. */
  workers?: number;
  /** Handles a fetched batch, each job through `runJob`; returns when all are handled. */
  handleBatch(jobs: Job<T>[], runJob: RunJob<T>): Promise<void>;
  /** Failures that are part of normal operation (a job not yet due): logged at info, not as errors. */
  isExpected?(err: unknown): boolean;
}

export interface RunningBatchWorker {
  /** Stops fetching, then waits for the batches in hand. */
  stop(): Promise<void>;
}

export async function startBatchWorker<T extends object>(o: BatchWorkerOptions<T>): Promise<RunningBatchWorker> {
  const inFlight = new Set<Promise<void>>();
  let stopping = false;

  const runJob: RunJob<T> = async (job, work) => {
    try {
      const outcome = await work();
      o.log.debug({ jobId: job.id, data: job.data, outcome }, `${o.name} job done`);
    } catch (err) {
      if (o.isExpected?.(err)) o.log.info({ jobId: job.id, data: job.data }, (err as Error).message);
      else o.log.error({ err, jobId: job.id, data: job.data }, `${o.name} job failed; pg-boss will run it again`);
      await o.boss.fail(o.queue, job.id, { message: (err as Error).message }).catch((failErr: unknown) => {
        // pg-boss completes every job of a batch whose handler returns, and this one would be lost:
        // failing the handler fails the whole batch instead (handlers skip work already done).
        o.log.error({ err: failErr, jobId: job.id }, `could not mark the ${o.name} job failed; failing its batch`);
        throw failErr;
      });
    }
  };

  const ids: string[] = [];
  for (let i = 0; i < (o.workers ?? 1); i++) {
    let id = '';
    id = await o.boss.work<T>(
      o.queue,
      { batchSize: o.batchSize, pollingIntervalSeconds: Math.max(MIN_POLL_SECONDS, o.pollIntervalMs / 1000) },
      async (jobs) => {
        // Jobs fetched while stopping go back to the queue (failed, so retried) rather than being completed unhandled.
        if (stopping) throw new Error(`${o.name} is stopping`);
        const batch = o.handleBatch(jobs, runJob);
        inFlight.add(batch);
        try {
          await batch;
        } finally {
          inFlight.delete(batch);
        }
        // pg-boss sleeps out the polling interval after every batch; a full batch means a backlog,
        // so the worker fetches again at once (the interval only paces an idle queue).
        if (jobs.length >= o.batchSize && !stopping) o.boss.notifyWorker(id);
      },
    );
    ids.push(id);
  }
  o.log.info({ workers: ids.length, batchSize: o.batchSize }, `${o.name} started`);

  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        for (const id of ids) await o.boss.offWork({ id });
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        o.log.info(`${o.name} stopped`);
      })()),
  };
}
