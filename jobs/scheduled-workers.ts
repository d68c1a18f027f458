// Puts the scheduled workers on pg-boss cron schedules (UTC); pg-boss hands each tick to exactly one process.
import { createJobQueue, type Boss } from '../shared/jobs/boss.js';
import { intervalCron, runWorker, WORKERS, type WorkerDeps } from '../shared/operations/workers/catalog.js';

const queueName = (worker: string) => `worker.${worker}`;
/** pg-boss refuses a job expiry of 24 hours or more. */
const MAX_EXPIRE_SECONDS = 24 * 3600 - 1;

/** Registers every worker's schedule and its handler; returns how to stop handling ticks. */
export async function scheduleWorkers(boss: Boss, deps: WorkerDeps): Promise<() => Promise<void>> {
  const names: string[] = [];
  for (const worker of WORKERS) {
    const queue = queueName(worker.name);
    const minutes = worker.intervalMinutes(deps);
    // stately: at most one tick queued and one running, so a slow tick never piles up a backlog.
    // No retry (the next tick comes anyway), and a tick may run for up to one interval before it counts as stuck
    // (pg-boss allows less than 24 hours, so a daily worker's tick gets a second less).
    const expireInSeconds = Math.min(minutes * 60, MAX_EXPIRE_SECONDS);
    const options = { policy: 'stately' as const, retryLimit: 0, expireInSeconds };
    await createJobQueue(deps.sql, queue, options);
    await boss.updateQueue(queue, { name: queue, retryLimit: 0, expireInSeconds });
    await boss.schedule(queue, intervalCron(minutes, worker.offsetMinutes ?? 0), {}, { tz: 'UTC' });
    await boss.work(queue, { batchSize: 1 }, async () => {
      await runWorker(deps, worker);
    });
    names.push(queue);
  }
  return async () => {
    for (const name of names) await boss.offWork(name);
  };
}
