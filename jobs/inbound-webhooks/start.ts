// Starts inbound-webhook delivery in the outbound role: pg-boss workers on INBOUND_WEBHOOK_JOBS, each batch POSTed at once, and a graceful stop.
import { startBatchWorker } from '../../shared/jobs/batch-worker.js';
import { INBOUND_WEBHOOK_JOBS, type InboundWebhookJob } from '../../shared/inbound/jobs.js';
import { DeliveryNotDueError, runWebhookJob, type WebhookDeps } from './worker.js';

export interface RunningWebhookDelivery {
  /** Stops fetching jobs and waits for the POSTs in flight (each ends within the receiver timeout). */
  stop(): Promise<void>;
}

export async function startWebhookDelivery(deps: WebhookDeps): Promise<RunningWebhookDelivery> {
  const log = deps.log.child({ worker: 'inbound-webhook' });
  const w = deps.config.webhooks.workers;
  return startBatchWorker<InboundWebhookJob>({
    boss: deps.boss,
    queue: INBOUND_WEBHOOK_JOBS,
    name: 'inbound webhook delivery',
    log,
    batchSize: w.batch_size,
    pollIntervalMs: w.poll_interval_ms,
    // A batch's POSTs go out at once; a failed job runs again 30 s later (pg-boss retry).
    handleBatch: async (jobs, runJob) => {
      await Promise.all(jobs.map((job) => runJob(job, () => runWebhookJob({ ...deps, log }, job))));
    },
    isExpected: (err) => err instanceof DeliveryNotDueError,
  });
}
