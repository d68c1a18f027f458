// Starts the campaign fan-out workers of a process (outbound role): pg-boss jobs of campaign-fanout, a graceful stop that hands a running campaign to a
// continuation job, and on start a nudge to every campaign that should be running.
import { startBatchWorker } from '../../shared/jobs/batch-worker.js';
import { enqueueFanout, FANOUT_JOBS, type FanoutJob } from '../../shared/campaigns/fanout-jobs.js';
import { runFanout, type FanoutDeps } from '../../shared/campaigns/fanout.js';
import { campaignsToResume } from '../../shared/campaigns/queries.js';

export interface RunningFanoutWorker {
  /** Stops fetching; a running fan-out finishes its batch, queues its continuation and returns. */
  stop(): Promise<void>;
}

/**
 * Queues the fan-out of every sending campaign (at its waiting_until when it waits) and of scheduled ones already
 * due. Jobs survive a restart on their own; this only makes sure nothing depends on a dead process's job expiring
 * first (singleton keys make a second nudge a no-op).
 */
export async function resumeCampaigns(deps: FanoutDeps): Promise<number> {
  const now = deps.clock.now();
  const campaigns = await campaignsToResume(deps.sql, now);
  for (const c of campaigns) {
    await enqueueFanout(deps, deps.sql, c.id, c.waiting_until && c.waiting_until > now ? c.waiting_until : undefined);
  }
  return campaigns.length;
}

export async function startFanoutWorker(deps: FanoutDeps): Promise<RunningFanoutWorker> {
  const log = deps.log.child({ worker: 'campaign-fanout' });
  const f = deps.config.campaigns.fanout;
  let stopping = false;
  const control = { stopping: () => stopping };
  const resumed = await resumeCampaigns(deps);
  if (resumed > 0) log.info({ campaigns: resumed }, 'campaign fan-outs queued again after start');
  const worker = await startBatchWorker<FanoutJob>({
    boss: deps.boss,
    queue: FANOUT_JOBS,
    name: 'campaign fan-out',
    log,
    batchSize: 1,
    pollIntervalMs: deps.config.delivery.workers.poll_interval_ms,
    workers: f.workers,
    handleBatch: async (jobs, runJob) => {
      for (const job of jobs) await runJob(job, () => runFanout({ ...deps, log }, job.data, control));
    },
  });
  return {
    stop: async () => {
      stopping = true;
      await worker.stop();
    },
  };
}
