// The one writer of audit rows (appended to the hash chain under a lock) and the chain verifier.
import type { Queryable, Sql } from '../db/connection.js';
import { auditHash, GENESIS_HASH, type AuditContent } from './chain.js';

/** Arbitrary constant naming the audit-chain lock among advisory locks. */
const AUDIT_LOCK_KEY = 74_615_012;

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
  prev_hash: string;
  hash: string;
}

async function append(tx: Queryable, event: AuditEvent): Promise<void> {
  // Serializes writers until commit, so two rows never chain to the same predecessor.
  await tx`select pg_advisory_xact_lock(${AUDIT_LOCK_KEY})`;
  const [last] = await tx<{ hash: string }[]>`select hash from audit_events order by id desc limit 1`;
  const prevHash = last?.hash ?? GENESIS_HASH;
  // Millisecond precision: the stored timestamp must read back exactly as hashed.
  const content: AuditContent = {
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
  const hash = auditHash(content, prevHash);
  await tx`
    insert into audit_events (tenant_id, actor_type, actor_id, action, resource_type, resource_id, metadata, ip, created_at, prev_hash, hash)
    values (${content.tenant_id}, ${content.actor_type}, ${content.actor_id}, ${content.action}, ${content.resource_type},
            ${content.resource_id}, ${tx.json(content.metadata as never)}, ${content.ip}, ${content.created_at}, ${prevHash}, ${hash})`;
}

/**
 * Appends an audit row. Pass the transaction of the change being audited so the row commits
 * with it; given the pool, it opens a transaction of its own.
 */
export async function writeAudit(db: Queryable, event: AuditEvent): Promise<void> {
  if ('savepoint' in db) {
    await append(db, event);
  } else {
    await (db as Sql).begin((tx) => append(tx, event));
  }
}

/** Walks the chain in order; returns the id of the first row whose hash does not match, or null when intact. */
export async function verifyAuditChain(db: Queryable, batchSize = 1000): Promise<{ intact: boolean; rows: number; brokenAt: string | null }> {
  let prevHash = GENESIS_HASH;
  let afterId = '0';
  let rows = 0;
  for (;;) {
    const batch = await db<AuditRow[]>`
      select * from audit_events where id > ${afterId} order by id limit ${batchSize}`;
    for (const row of batch) {
      const expected = auditHash(
        {
          tenant_id: row.tenant_id,
          actor_type: row.actor_type,
          actor_id: row.actor_id,
          action: row.action,
          resource_type: row.resource_type,
          resource_id: row.resource_id,
          metadata: row.metadata,
          ip: row.ip,
          created_at: row.created_at,
        },
        prevHash,
      );
      if (row.prev_hash !== prevHash || row.hash !== expected) return { intact: false, rows, brokenAt: row.id };
      prevHash = row.hash;
      rows++;
    }
    if (batch.length < batchSize) return { intact: true, rows, brokenAt: null };
    afterId = batch[batch.length - 1]!.id;
  }
}
