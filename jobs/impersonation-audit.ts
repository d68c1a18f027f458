// Writes the audit rows of impersonated writes the API queued (scheduler role), each exactly once.
import { startBatchWorker, type RunningBatchWorker } from '../shared/jobs/batch-worker.js';
import {
  IMPERSONATION_AUDIT_JOBS,
  writeImpersonationAudit,
  type ImpersonationActionJob,
  type ImpersonationAuditDeps,
} from '../shared/accounts/impersonation/audit-jobs.js';

/** Works the queue (scheduler role): each job becomes one audit row; a failure is retried by pg-boss. */
export async function startImpersonationAuditWorker(deps: ImpersonationAuditDeps): Promise<RunningBatchWorker> {
  return startBatchWorker<ImpersonationActionJob>({
    boss: deps.boss,
    queue: IMPERSONATION_AUDIT_JOBS,
    name: 'impersonation audit',
    log: deps.log.child({ worker: 'impersonation-audit' }),
    batchSize: 20,
    pollIntervalMs: 1000,
    // One at a time: every audit row takes the chain's lock anyway.
    handleBatch: async (jobs, runJob) => {
      for (const job of jobs) await runJob(job, () => writeImpersonationAudit(deps.sql, job.id, job.data));
    },
  });
}
