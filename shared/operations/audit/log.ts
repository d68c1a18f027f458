// The one writer of audit rows: an insert, unchained, with the audited change; the appender (appender.ts) chains it after commit.
import type { Queryable } from '../../db/connection.js';
import type { AuditContent } from './chain.js';

export interface AuditActor {
  type: 'user' | 'api_key' | 'system';
  id: string | null;
  ip?: string | null;
}

export interface AuditEvent {
  tenantId: string | null;
  actor: AuditActor;
  action: string;
  resourceType?: string;
  resourceId?: string;
  metadata?: Record<string, unknown>;
  at: Date;
}

export interface AuditRow extends AuditContent {
  id: string;
  /** Position in the chain; null until the appender has chained the row. */
  chain_seq: string | null;
  prev_hash: string | null;
  hash: string | null;
}

/** The content the chain hashes, as stored: millisecond precision, so the timestamp reads back exactly as hashed. */
export function auditContent(event: AuditEvent): AuditContent {
  return {
    tenant_id: event.tenantId,
    actor_type: event.actor.type,
    actor_id: event.actor.id,
    action: event.action,
    resource_type: event.resourceType ?? null,
    resource_id: event.resourceId ?? null,
    metadata: event.metadata ?? {},
    ip: event.actor.ip ?? null,
    created_at: new Date(Math.floor(event.at.getTime())),
  };
}

/**
 * Appends an audit row. Pass the transaction of the change being audited so the row commits (or rolls back)
 * with it; given the pool, the insert commits on its own. No lock is taken: writers never wait for each other,
 * and the row joins the hash chain once committed (shared/operations/audit/appender.ts).
 */
export async function writeAudit(db: Queryable, event: AuditEvent): Promise<void> {
  const c = auditContent(event);
  await db`
    insert into audit_events (tenant_id, actor_type, actor_id, action, resource_type, resource_id, metadata, ip, created_at)
    values (${c.tenant_id}, ${c.actor_type}, ${c.actor_id}, ${c.action}, ${c.resource_type},
            ${c.resource_id}, ${db.json(c.metadata as never)}, ${c.ip}, ${c.created_at})`;
}
