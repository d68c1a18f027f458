// The per-(tenant, mailbox provider) daily sub-caps as a super-admin sets them: the row changed and its audit row, in one transaction.
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import type { MailboxProvider } from '../mailbox-providers.js';
import { setEspCap } from './per-esp-queries.js';

/** Sets the tenant's sub-cap for one provider, or removes it (null: no sub-cap); audited as warmup.esp_cap_set. */
export async function setTenantEspCap(
  deps: { sql: Sql; clock: Clock },
  actor: AuditActor,
  c: { tenantId: string; provider: MailboxProvider; dailyLimit: number | null },
): Promise<void> {
  await deps.sql.begin(async (tx) => {
    await setEspCap(tx, c.tenantId, c.provider, c.dailyLimit);
    await writeAudit(tx, {
      tenantId: c.tenantId,
      actor,
      action: 'warmup.esp_cap_set',
      resourceType: 'warmup_esp_cap',
      resourceId: `${c.tenantId}:${c.provider}`,
      metadata: { provider: c.provider, daily_limit: c.dailyLimit },
      at: deps.clock.now(),
    });
  });
}
