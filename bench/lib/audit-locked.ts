// The audit writer as it was before the appender (the bench's peer): every write takes one advisory lock until commit, reads the last hash and chains its
// row itself.
import type { AuditEvent } from '../../shared/operations/audit/log.js';
import { auditContent } from '../../shared/operations/audit/log.js';
import { auditHash, GENESIS_HASH } from '../../shared/operations/audit/chain.js';
import type { Queryable } from '../../shared/db/connection.js';

/** The lock key the appender uses: the peer and the appender must not chain at the same time. */
const LOCK_KEY = 74_615_012;

/** Appends one chained row in the caller's transaction, serialized with every other writer until commit. */
export async function writeAuditLocked(tx: Queryable, event: AuditEvent): Promise<void> {
  await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
  const [last] = await tx<{ chain_seq: string; hash: string }[]>`
    select chain_seq, hash from audit_events where chain_seq is not null order by chain_seq desc limit 1`;
  const prevHash = last?.hash ?? GENESIS_HASH;
  const seq = (BigInt(last?.chain_seq ?? '0') + 1n).toString();
  const c = auditContent(event);
  const hash = auditHash(c, prevHash);
  await tx`
    insert into audit_events (tenant_id, actor_type, actor_id, action, resource_type, resource_id, metadata, ip, created_at, chain_seq, prev_hash, hash)
    values (${c.tenant_id}, ${c.actor_type}, ${c.actor_id}, ${c.action}, ${c.resource_type}, ${c.resource_id},
            ${tx.json(c.metadata as never)}, ${c.ip}, ${c.created_at}, ${seq}, ${prevHash}, ${hash})`;
}
