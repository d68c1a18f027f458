// Reads the DKIM rotation audit trail across tenants (the audit rows every rotation transition writes).
import type { Queryable } from '../../db/connection.js';

export interface RotationAuditRow {
  id: string;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string | null;
  action: string;
  resource_id: string | null;
  metadata: Record<string, unknown>;
  created_at: Date;
}

export async function listRotationAudit(
  db: Queryable,
  f: { limit: number; offset: number; tenantId?: string | undefined; domainId?: string | undefined; since?: Date | undefined },
): Promise<RotationAuditRow[]> {
  return db<RotationAuditRow[]>`
    select id::text as id, tenant_id, actor_type, actor_id, action, resource_id, metadata, created_at
    from audit_events
    where resource_type = 'dkim_rotation'
      ${f.tenantId ? db`and tenant_id = ${f.tenantId}` : db``}
      ${f.domainId ? db`and metadata->>'domain_id' = ${f.domainId}` : db``}
      ${f.since ? db`and created_at >= ${f.since}` : db``}
    -- The table's bigint id: a bare "id" would name the text output column and sort 10 before 9.
    order by audit_events.id desc
    limit ${f.limit} offset ${f.offset}`;
}
