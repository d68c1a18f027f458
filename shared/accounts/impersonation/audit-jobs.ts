// The audit of writes made with an impersonation token: the API queues one job per POST/PUT/PATCH/DELETE after answering (never slowing the request), and a
// worker writes each as a super_admin.impersonation_action audit row (pg-boss retries, so none is lost).
import { writeAudit } from '../../operations/audit/log.js';
import type { Sql } from '../../db/connection.js';
import { createJobQueue, type Boss } from '../../jobs/boss.js';
import type { Logger } from '../../kernel/log.js';
import { impersonationAuditWritten } from './queries.js';

export const IMPERSONATION_AUDIT_JOBS = 'audit.impersonation';
export const IMPERSONATION_ACTION = 'super_admin.impersonation_action';

/** One write made while impersonating. */
export interface ImpersonationActionJob {
  tenant_id: string;
  impersonator_user_id: string;
  method: string;
  /** The route pattern (e.g. /api/v1/lists/:id) and the concrete path, without the query string. */
  route: string | null;
  path: string;
  status_code: number;
  request_id: string;
  ip: string | null;
  /** When the request was answered (ISO 8601): the audit row's time, however late the job runs. */
  at: string;
}

/**
 * Creates the queue (idempotent). Retries are generous: an audit row must outlast a database restart,
 * and each run first checks the row is not already written.
 */
export async function ensureImpersonationAuditJobs(sql: Sql): Promise<void> {
  await createJobQueue(sql, IMPERSONATION_AUDIT_JOBS, {
    retryLimit: 50,
    retryDelay: 2,
    retryBackoff: true,
    expireInSeconds: 120,
    retentionMinutes: 7 * 24 * 60,
  });
}

export interface ImpersonationAuditDeps {
  sql: Sql;
  boss: Boss;
  log: Logger;
}

/** Writes the audit row of one queued action, unless a previous run of the same job already did. */
export async function writeImpersonationAudit(sql: Sql, jobId: string, job: ImpersonationActionJob): Promise<'written' | 'already_written'> {
  return sql.begin(async (tx) => {
    if (await impersonationAuditWritten(tx, jobId)) return 'already_written' as const;
    await writeAudit(tx, {
      tenantId: job.tenant_id,
      actor: { type: 'user', id: job.impersonator_user_id, ip: job.ip },
      action: IMPERSONATION_ACTION,
      resourceType: 'http_request',
      resourceId: job.request_id,
      metadata: {
        job_id: jobId,
        impersonator_user_id: job.impersonator_user_id,
        method: job.method,
        route: job.route,
        path: job.path,
        status_code: job.status_code,
      },
      at: new Date(job.at),
    });
    return 'written' as const;
  });
}

/**
 * Queues one action's audit job; a failed insert (the database briefly away) is tried again a few times with backoff.
 * Runs after the answer went out. If every try fails the row's content goes to the error log, so it can be restored.
 */
export async function queueImpersonationAction(deps: ImpersonationAuditDeps, job: ImpersonationActionJob, tries = 5): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.boss.send(IMPERSONATION_AUDIT_JOBS, job);
      return;
    } catch (err) {
      if (attempt >= tries) {
        deps.log.error({ err, impersonationAction: job }, 'could not queue the audit row of an impersonated write');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
  }
}
