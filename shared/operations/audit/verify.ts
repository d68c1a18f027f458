// Verifies the audit hash chain: walks the chained rows in chain order and reports the first broken link.
import type { Queryable } from '../../db/connection.js';
import { auditHashIso, GENESIS_HASH } from './chain.js';
import type { AuditRow } from './log.js';

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

/** A row as the chain's code reads it: created_at as ISO text and metadata as JSON text, parsed here. */
export interface ChainedRowText extends Omit<AuditRow, 'created_at' | 'metadata'> {
  created_at: string;
  metadata: string;
}

/** The row's hash given its predecessor's: what the appender writes and the verifier recomputes. */
export function hashRowText(row: ChainedRowText, prevHash: string): string {
  return auditHashIso(
    {
      tenant_id: row.tenant_id,
      actor_type: row.actor_type,
      actor_id: row.actor_id,
      action: row.action,
      resource_type: row.resource_type,
      resource_id: row.resource_id,
      metadata: JSON.parse(row.metadata) as Record<string, unknown>,
      ip: row.ip,
      created_at: row.created_at,
    },
    prevHash,
  );
}

/** The columns of ChainedRowText (timestamps at millisecond precision, as hashed). */
export const ROW_TEXT_COLUMNS = `id, chain_seq::text as chain_seq, tenant_id, actor_type, actor_id, action, resource_type, resource_id,
  metadata::text as metadata, ip, prev_hash, hash,
  to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as created_at`;

const broken = (rows: number, row: ChainedRowText, reason: string): ChainReport => ({
  intact: false,
  rows,
  brokenAt: row.id,
  brokenSeq: row.chain_seq,
  reason,
});

/** One page of the chain from position `from`, in chain order (the unique index on chain_seq serves it). */
function page(db: Queryable, from: bigint, size: number): Promise<ChainedRowText[]> {
  return db<ChainedRowText[]>`
    select ${db.unsafe(ROW_TEXT_COLUMNS)}
    from audit_events where audit_events.chain_seq >= ${from.toString()} order by audit_events.chain_seq limit ${size}`;
}

/**
 * Walks the chained prefix of the log (chain_seq 1, 2, …; rows the appender has not reached yet are outside the
 * chain) and checks each link: positions have no gap, prev_hash is the predecessor's hash and hash covers the
 * row's content. An edited, inserted or deleted row breaks the link at it (a deleted row: at its successor).
 * The next page is fetched while the current one is hashed, so the database and the hashing overlap.
 */
export async function verifyAuditChain(db: Queryable, batchSize = 10_000): Promise<ChainReport> {
  let prevHash = GENESIS_HASH;
  let expectedSeq = 1n;
  let rows = 0;
  let next = page(db, expectedSeq, batchSize);
  for (;;) {
    const batch = await next;
    const full = batch.length === batchSize;
    if (full) next = page(db, BigInt(batch[batch.length - 1]!.chain_seq!) + 1n, batchSize);
    for (const row of batch) {
      if (BigInt(row.chain_seq!) !== expectedSeq) return settle(full, next, broken(rows, row, `chain position ${expectedSeq} is missing`));
      if (row.prev_hash !== prevHash) return settle(full, next, broken(rows, row, 'prev_hash is not the hash of the row before'));
      if (row.hash !== hashRowText(row, prevHash)) return settle(full, next, broken(rows, row, 'hash does not match the row content'));
      prevHash = row.hash;
      expectedSeq += 1n;
      rows++;
    }
    if (!full) return { intact: true, rows, brokenAt: null, brokenSeq: null, reason: null };
  }
}

/** Lets a prefetched page finish (and swallows its failure) before answering, so no query is left running. */
async function settle(pending: boolean, next: Promise<unknown>, report: ChainReport): Promise<ChainReport> {
  if (pending) await next.catch(() => undefined);
  return report;
}
