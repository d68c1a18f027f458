// Starts the outbound role: pg-boss workers on the delivery queue, a global cap on deliveries in flight, shared per-destination connections, and a graceful stop.
import { setMaxListeners } from 'node:events';
import type { Job } from 'pg-boss';
import { Gate } from '../../../shared/concurrency.js';
import { startBatchWorker, type RunJob } from '../../../shared/jobs/batch-worker.js';
import { DELIVERY_JOBS, type DeliveryJob } from '../../../shared/sending/delivery-jobs.js';
import { Transports } from './transports.js';
import { IpWatchdog } from '../../../shared/ip-pools/watchdog.js';
import { isUuid } from '../../../shared/ids.js';
import { claimQueued } from '../../../shared/sends/delivery-queries.js';
import { createDeliveredWriter } from './record.js';
import { deliverClaimed, runDeliveryJob, SendBusyError, type DeliveryDeps, type WorkerContext } from './worker.js';

export type { DeliveryDeps };

export interface RunningOutbound {
  /** Stops fetching jobs, waits for the deliveries in flight, then closes the connections. */
  stop(): Promise<void>;
}

// A batch must end before pg-boss expires its jobs (and hands them to another worker): deliveries
// still running at this share of job_expire_seconds are cut short and retried on the curve.
const DEADLINE_SHARE = 0.8;
// Each worker polls the database on its own: more than this costs more in idle polling than it gains.
const MAX_WORKERS = 8;

/**
 * pg-boss hands a worker one batch at a time and waits for all of it, so one slow message holds
 * its batch. Several workers (concurrency / batch_size of them, at most MAX_WORKERS) keep the rest
 * of the queue moving; the Gate keeps the deliveries in flight in this process at `concurrency`. The per-destination
 * cap is the connection pool's maxConnections (see transports.ts).
 */
export async function startOutbound(deps: DeliveryDeps): Promise<RunningOutbound> {
  const w = deps.config.delivery.workers;
  // The role is named by main/roles.ts already; the worker names itself, as its siblings do.
  const log = deps.log.child({ worker: 'delivery' });
  const ctx: WorkerContext = {
    deps: { ...deps, log },
    transports: new Transports(deps.config, log),
    delivered: createDeliveredWriter(deps.sql, log),
    watchdog: new IpWatchdog({ sql: deps.sql, config: deps.config, clock: deps.clock, log }),
  };
  const gate = new Gate(w.concurrency);

  const handleBatch = async (jobs: Job<DeliveryJob>[], runJob: RunJob<DeliveryJob>): Promise<void> => {
    const signal = AbortSignal.timeout(Math.floor(w.job_expire_seconds * 1000 * DEADLINE_SHARE));
    // Every message of the batch waiting in a pool listens to it at once.
    setMaxListeners(jobs.length + 10, signal);
    // The common case, a queued send, is claimed for the whole batch in one statement; the rest
    // (deferred wake-ups, sends a dead worker left behind, stray jobs) take the one-job path.
    const ids = jobs.map((job) => job.data?.send_id).filter((id): id is string => typeof id === 'string' && isUuid(id));
    const claimed = new Map((await claimQueued(deps.sql, ids, deps.clock.now())).map((s) => [s.id, s]));
    await Promise.all(
      jobs.map((job) => {
        const send = claimed.get(job.data?.send_id);
        return gate.run(() => runJob(job, () => (send ? deliverClaimed(ctx, send, send.message, job, signal) : runDeliveryJob(ctx, job, signal))));
      }),
    );
  };

  const worker = await startBatchWorker<DeliveryJob>({
    boss: deps.boss,
    queue: DELIVERY_JOBS,
    name: 'outbound delivery',
    log,
    batchSize: w.batch_size,
    pollIntervalMs: w.poll_interval_ms,
    workers: Math.min(MAX_WORKERS, Math.max(1, Math.ceil(w.concurrency / w.batch_size))),
    handleBatch,
    isExpected: (err) => err instanceof SendBusyError,
  });

  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        await worker.stop();
        await ctx.transports.close();
      })()),
  };
}
