// Verifies the audit hash chain: walks the chained rows in chain order and reports the first broken link.
import type { Queryable } from '../db/connection.js';
import { auditHash, GENESIS_HASH, type AuditContent } from './chain.js';
import type { AuditRow } from './log.js';

/** The hashed content of a stored row (jsonb and timestamptz read back exactly as they were hashed). */
export function rowContent(row: AuditRow): AuditContent {
  return {
    tenant_id: row.tenant_id,
    actor_type: row.actor_type,
    actor_id: row.actor_id,
    action: row.action,
    resource_type: row.resource_type,
    resource_id: row.resource_id,
    metadata: row.metadata,
    ip: row.ip,
    created_at: row.created_at,
  };
}

export interface ChainReport {
  intact: boolean;
  /** Chained rows verified before the first broken link (all of them when intact). */
  rows: number;
  /** Id of the first row whose link does not hold, null when intact. */
  brokenAt: string | null;
  /** Its chain position and what is wrong with it, null when intact. */
  brokenSeq?: string | null;
  reason?: string | null;
}

const broken = (rows: number, row: AuditRow, reason: string): ChainReport => ({ intact: false, rows, brokenAt: row.id, brokenSeq: row.chain_seq, reason });

/**
 * Walks the chained prefix of the log (chain_seq 1, 2, …; rows the appender has not reached yet are outside the
 * chain) and checks each link: positions have no gap, prev_hash is the predecessor's hash and hash covers the
 * row's content. An edited, inserted or deleted row breaks the link at it (a deleted row: at its successor).
 */
export async function verifyAuditChain(db: Queryable, batchSize = 10_000): Promise<ChainReport> {
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1n;
  let rows = 0;
  for (;;) {
    const batch = await db<AuditRow[]>`
      select * from audit_events where chain_seq >= ${expectedSeq.toString()} order by chain_seq limit ${batchSize}`;
    for (const row of batch) {
      if (BigInt(row.chain_seq!) !== expectedSeq) return broken(rows, row, `chain position ${expectedSeq} is missing`);
      if (row.prev_hash !== prevHash) return broken(rows, row, 'prev_hash is not the hash of the row before');
      if (row.hash !== auditHash(rowContent(row), prevHash)) return broken(rows, row, 'hash does not match the row content');
      prevHash = row.hash;
      expectedSeq += 1n;
      rows++;
    }
    if (batch.length < batchSize) return { intact: true, rows, brokenAt: null, brokenSeq: null, reason: null };
  }
}
