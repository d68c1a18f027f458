// Works the inbound unsubscribe queue in the outbound role: one job per mail the MX stored for a List-Unsubscribe mailto address, and a graceful stop.
import type { Config } from '../../shared/config/index.js';
import { INBOUND_UNSUBSCRIBE_JOBS, type InboundUnsubscribeJob } from '../../shared/inbound/jobs.js';
import type { Boss } from '../../shared/jobs/boss.js';
import { startBatchWorker } from '../../shared/jobs/batch-worker.js';
import { runUnsubscribeMail, type UnsubscribeMailDeps } from '../../shared/engagement/tracking/unsubscribe-mail.js';

export interface UnsubscribeWorkerDeps extends UnsubscribeMailDeps {
  boss: Boss;
  config: Pick<Config, 'hostname' | 'delivery'>;
}

export interface RunningUnsubscribeIntake {
  /** Stops fetching jobs and waits for the ones in hand. */
  stop(): Promise<void>;
}

const BATCH_SIZE = 20;

export async function startUnsubscribeIntake(deps: UnsubscribeWorkerDeps): Promise<RunningUnsubscribeIntake> {
  const log = deps.log.child({ worker: 'unsubscribe-intake' });
  const intake: UnsubscribeMailDeps = { ...deps, log };
  return startBatchWorker<InboundUnsubscribeJob>({
    boss: deps.boss,
    queue: INBOUND_UNSUBSCRIBE_JOBS,
    name: 'unsubscribe intake',
    log,
    batchSize: BATCH_SIZE,
    pollIntervalMs: deps.config.delivery.workers.poll_interval_ms,
    // One job after the other: a failed one runs again later (pg-boss retry, with back-off).
    handleBatch: async (jobs, runJob) => {
      for (const job of jobs) await runJob(job, () => runUnsubscribeMail(intake, job.data?.recipient_id));
    },
  });
}
