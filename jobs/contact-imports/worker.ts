// Starts the import workers of a process (outbound role): pg-boss jobs of IMPORT_JOBS, one import at a time per worker, a graceful stop that hands a running
// import to a continuation job, and the sweep of uploads a dead API process left behind.
import { startBatchWorker } from '../../shared/jobs/batch-worker.js';
import { IMPORT_JOBS, type ImportJob } from '../../shared/audiences/imports/jobs.js';
import { failStaleUploads, markFailed } from '../../shared/audiences/imports/queries.js';
import { runImport, type ImportDeps } from '../../shared/audiences/imports/run.js';

export interface RunningImportWorker {
  /** Stops fetching; a running import commits its batch, queues its continuation and returns. */
  stop(): Promise<void>;
}

const SWEEP_INTERVAL_MS = 10 * 60 * 1000;

export async function startImportWorker(deps: ImportDeps): Promise<RunningImportWorker> {
  const limits = deps.config.limits.imports;
  const log = deps.log.child({ worker: 'contact-import' });
  let stopping = false;
  const control = { stopping: () => stopping };

  const sweep = async () => {
    const now = deps.clock.now();
    const olderThan = new Date(now.getTime() - limits.upload_timeout_ms - 60_000);
    const n = await failStaleUploads(deps.sql, olderThan, now).catch((err: unknown) => {
      log.warn({ err }, 'could not sweep interrupted uploads');
      return 0;
    });
    if (n > 0) log.info({ uploads: n }, 'interrupted uploads marked failed');
  };
  void sweep();
  const sweeper = setInterval(() => void sweep(), SWEEP_INTERVAL_MS);
  sweeper.unref();

  const worker = await startBatchWorker<ImportJob>({
    boss: deps.boss,
    queue: IMPORT_JOBS,
    name: 'contact import',
    log,
    batchSize: 1,
    pollIntervalMs: 1000,
    workers: limits.workers,
    handleBatch: async (jobs, runJob) => {
      for (const job of jobs) {
        await runJob(job, async () => {
          try {
            return await runImport({ ...deps, log }, job.data.import_id, control);
          } catch (err) {
            // The last attempt: the import says why it stopped instead of staying 'running' for ever.
            const meta = await deps.boss.getJobById(IMPORT_JOBS, job.id).catch(() => null);
            if (meta && meta.retryCount >= meta.retryLimit) {
              await markFailed(
                deps.sql,
                job.data.import_id,
                `the import stopped after ${meta.retryCount + 1} attempts: ${(err as Error).message}`,
                deps.clock.now(),
              );
            }
            throw err;
          }
        });
      }
    },
  });
  return {
    stop: async () => {
      stopping = true;
      clearInterval(sweeper);
      await worker.stop();
    },
  };
}
