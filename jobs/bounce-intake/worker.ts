// Works the inbound bounce queue in the outbound role: one intake per job the MX enqueued for bounce mail, and a graceful stop.
import type { Config } from '../../shared/config/index.js';
import { INBOUND_BOUNCE_JOBS, type InboundBounceJob } from '../../shared/inbound/jobs.js';
import type { Boss } from '../../shared/jobs/boss.js';
import { startBatchWorker } from '../../shared/jobs/batch-worker.js';
import { runBounceIntake, type IntakeDeps } from './intake.js';

export interface BounceWorkerDeps extends IntakeDeps {
  boss: Boss;
  config: Pick<Config, 'hostname' | 'bounceRules' | 'delivery'>;
}

export interface RunningBounceIntake {
  /** Stops fetching jobs and waits for the ones in hand. */
  stop(): Promise<void>;
}

// Reports are few next to deliveries: a small batch, handled one job after the other.
const BATCH_SIZE = 20;

export async function startBounceIntake(deps: BounceWorkerDeps): Promise<RunningBounceIntake> {
  const w = deps.config.delivery.workers;
  const log = deps.log.child({ worker: 'bounce-intake' });
  const intake: IntakeDeps = { ...deps, log };
  return startBatchWorker<InboundBounceJob>({
    boss: deps.boss,
    queue: INBOUND_BOUNCE_JOBS,
    name: 'bounce intake',
    log,
    batchSize: BATCH_SIZE,
    pollIntervalMs: w.poll_interval_ms,
    // One job after the other: a failed one runs again later (pg-boss retry, with back-off).
    handleBatch: async (jobs, runJob) => {
      for (const job of jobs) await runJob(job, () => runBounceIntake(intake, job.data?.recipient_id));
    },
  });
}
