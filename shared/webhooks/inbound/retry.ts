// A failed inbound webhook attempt's retry: the delivery row announces its next attempt and that attempt's job is queued, in one transaction, or neither.
import type { Sql } from '../../db/connection.js';
import { enqueueInboundJobs } from '../../inbound/jobs.js';
import type { Boss } from '../../jobs/boss.js';
import { markRetry, type AttemptOutcome } from './queries.js';

/** False when the delivery changed during the attempt (another worker's, or a newer attempt): nothing is written then. */
export async function scheduleRetry(
  deps: { sql: Sql; boss: Boss },
  id: string,
  attempt: number,
  o: AttemptOutcome & { nextAttemptAt: Date },
): Promise<boolean> {
  return deps.sql.begin(async (tx) => {
    const ok = await markRetry(tx, id, attempt, o);
    if (ok) await enqueueInboundJobs(deps.boss, tx, { webhook: [{ delivery_id: id }], bounce: [] }, o.nextAttemptAt);
    return ok;
  });
}
