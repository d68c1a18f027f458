// SQL for impersonation: whether a queued action's audit row is already written (a job run twice writes it once).
import type { Queryable } from '../../db/connection.js';

export async function impersonationAuditWritten(db: Queryable, jobId: string): Promise<boolean> {
  const rows = await db`
    select 1 from audit_events
    where action = 'super_admin.impersonation_action' and metadata->>'job_id' = ${jobId}
    limit 1`;
  return rows.length > 0;
}
