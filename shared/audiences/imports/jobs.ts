// The import job queue: one job per import (and per continuation of a long one), enqueued in the transaction that queues the import.
import { bossDb, createJobQueue, type Boss } from '../../jobs/boss.js';
import type { Queryable, Sql } from '../../db/connection.js';

export const IMPORT_JOBS = 'contacts.import';

export interface ImportJob {
  import_id: string;
}

/**
 * Creates the queue (idempotent). A job that fails (the database went away) runs again with back-off; one still
 * active after expireInSeconds belonged to a dead process and runs again, resuming after the committed rows.
 */
export async function ensureImportJobs(sql: Sql, boss: Boss, options: { expireInSeconds: number }): Promise<void> {
  const queue = { retryLimit: 10, retryDelay: 10, retryBackoff: true, expireInSeconds: options.expireInSeconds };
  await createJobQueue(sql, IMPORT_JOBS, queue);
  // An existing queue takes the configured expiry too (new jobs read it from the queue).
  await boss.updateQueue(IMPORT_JOBS, { name: IMPORT_JOBS, ...queue });
}

/** Enqueues the import's job inside `tx`: it exists iff the transaction commits. */
export async function enqueueImport(boss: Boss, tx: Queryable, job: ImportJob): Promise<void> {
  await boss.send(IMPORT_JOBS, job, { db: bossDb(tx) } as never);
}
