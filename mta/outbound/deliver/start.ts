// Starts the outbound role: pg-boss workers on the delivery queue, a global cap on deliveries in flight, shared per-destination connections, and a graceful stop.
import { setMaxListeners } from 'node:events';
import type { Job } from 'pg-boss';
import { Gate } from '../../../shared/concurrency.js';
import type { OutboundDeps } from '../deps.js';
import { DELIVERY_QUEUE, type DeliveryJob } from '../queue.js';
import { Transports } from './transports.js';
import { isUuid } from '../../../shared/ids.js';
import { claimQueued, type DeliverySend } from '../../../shared/sends/delivery-queries.js';
import { createDeliveredWriter } from './record.js';
import { deliverClaimed, runDeliveryJob, SendBusyError, type WorkerContext } from './worker.js';

export interface RunningOutbound {
  /** Stops fetching jobs, waits for the deliveries in flight, then closes the connections. */
  stop(): Promise<void>;
}

// pg-boss refuses to poll more often than this.
const MIN_POLL_SECONDS = 0.5;
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
export async function startOutbound(deps: OutboundDeps): Promise<RunningOutbound> {
  const w = deps.config.delivery.workers;
  const log = deps.log.child({ role: 'outbound' });
  const ctx: WorkerContext = { deps: { ...deps, log }, transports: new Transports(deps.config, log), delivered: createDeliveredWriter(deps.sql, log) };
  const gate = new Gate(w.concurrency);
  const inFlight = new Set<Promise<void>>();
  let stopping = false;

  const handle = async (jobs: Job<DeliveryJob>[]): Promise<void> => {
    // Jobs fetched while stopping go back to the queue (failed, so retried) rather than being completed unhandled.
    if (stopping) throw new Error('the outbound role is stopping');
    const signal = AbortSignal.timeout(Math.floor(w.job_expire_seconds * 1000 * DEADLINE_SHARE));
    // Every message of the batch waiting in a pool listens to it at once.
    setMaxListeners(jobs.length + 10, signal);
    // The common case, a queued send, is claimed for the whole batch in one statement; the rest
    // (deferred wake-ups, sends a dead worker left behind, stray jobs) take the one-job path.
    const ids = jobs.map((job) => job.data?.send_id).filter((id): id is string => typeof id === 'string' && isUuid(id));
    const claimed = new Map((await claimQueued(deps.sql, ids, deps.clock.now())).map((s) => [s.id, s]));
    const batch = Promise.all(
      jobs.map((job) => {
        const send = claimed.get(job.data?.send_id);
        return gate.run(() => (send ? runClaimed(send, job, signal) : runOne(job, signal)));
      }),
    ).then(() => undefined);
    inFlight.add(batch);
    try {
      await batch;
    } finally {
      inFlight.delete(batch);
    }
  };

  const runClaimed = (send: DeliverySend & { message: Buffer | null }, job: Job<DeliveryJob>, signal: AbortSignal) =>
    runOne(job, signal, () => deliverClaimed(ctx, send, send.message, job, signal));

  const runOne = async (job: Job<DeliveryJob>, signal: AbortSignal, run = () => runDeliveryJob(ctx, job, signal)): Promise<void> => {
    try {
      const outcome = await run();
      log.debug({ jobId: job.id, sendId: job.data?.send_id, outcome }, 'delivery job done');
    } catch (err) {
      // Only this job runs again (pg-boss retry); the rest of its batch completes normally.
      if (err instanceof SendBusyError) log.info({ jobId: job.id, sendId: job.data?.send_id }, err.message);
      else log.error({ err, jobId: job.id, sendId: job.data?.send_id }, 'delivery job failed; pg-boss will run it again');
      await deps.boss.fail(DELIVERY_QUEUE, job.id, { message: (err as Error).message }).catch((failErr: unknown) => {
        // pg-boss completes every job of a batch whose handler returns: this one would be lost.
        // Failing the handler fails the whole batch instead; its delivered sends are skipped when it runs again.
        log.error({ err: failErr, jobId: job.id }, 'could not mark the delivery job failed; failing its batch');
        throw failErr;
      });
    }
  };

  const workers = Math.min(MAX_WORKERS, Math.max(1, Math.ceil(w.concurrency / w.batch_size)));
  const ids: string[] = [];
  for (let i = 0; i < workers; i++) {
    let id = '';
    id = await deps.boss.work<DeliveryJob>(
      DELIVERY_QUEUE,
      { batchSize: w.batch_size, pollingIntervalSeconds: Math.max(MIN_POLL_SECONDS, w.poll_interval_ms / 1000) },
      async (jobs) => {
        await handle(jobs);
        // pg-boss sleeps out the polling interval after every batch; a full batch means a backlog,
        // so the worker fetches again at once (the interval only paces an idle queue).
        if (jobs.length >= w.batch_size && !stopping) deps.boss.notifyWorker(id);
      },
    );
    ids.push(id);
  }
  log.info({ workers, batchSize: w.batch_size, concurrency: w.concurrency }, 'outbound delivery started');

  let stopped: Promise<void> | undefined;
  return {
    stop: () =>
      (stopped ??= (async () => {
        stopping = true;
        for (const id of ids) await deps.boss.offWork({ id });
        while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
        await ctx.transports.close();
        log.info('outbound delivery stopped');
      })()),
  };
}
