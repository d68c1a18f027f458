// The audit chain's single appender: chains committed, unchained rows in batches, in id order, under a lock only it takes.
import type { Sql } from '../../db/connection.js';
import { GENESIS_HASH } from './chain.js';
import { hashRowText, ROW_TEXT_COLUMNS, verifyAuditChain, type ChainedRowText, type ChainReport } from './verify.js';

/** Arbitrary constant naming the audit appender's lock among advisory locks (only appenders take it). */
const APPENDER_LOCK_KEY = 74_615_012;
/** Rows chained per transaction: large enough to amortize the round trips, small enough to keep the lock short. */
export const APPEND_BATCH = 5000;

/**
 * Chains one batch of committed unchained rows (oldest id first), each to its predecessor in the chain, giving each
 * the next chain_seq. Only committed rows are visible here, so a row whose transaction commits later is chained in a
 * later batch (after rows with higher ids): the chain order is chain_seq, fixed once and never rewritten.
 * Returns how many rows were chained; 0 when another appender holds the lock or nothing is pending.
 */
export async function chainBatch(sql: Sql, batchSize = APPEND_BATCH): Promise<number> {
  return sql.begin(async (tx) => {
    const [lock] = await tx<{ ok: boolean }[]>`select pg_try_advisory_xact_lock(${APPENDER_LOCK_KEY}) as ok`;
    if (!lock!.ok) return 0;
    const pending = await tx<ChainedRowText[]>`
      select ${tx.unsafe(ROW_TEXT_COLUMNS)} from audit_events where chain_seq is null order by id limit ${batchSize}`;
    if (pending.length === 0) return 0;
    const [last] = await tx<{ chain_seq: string; hash: string }[]>`
      select chain_seq, hash from audit_events where chain_seq is not null order by chain_seq desc limit 1`;
    let prevHash = last?.hash ?? GENESIS_HASH;
    let seq = BigInt(last?.chain_seq ?? '0');
    const ids: string[] = [];
    const seqs: string[] = [];
    const prevs: string[] = [];
    const hashes: string[] = [];
    for (const row of pending) {
      const hash = hashRowText(row, prevHash);
      seq += 1n;
      ids.push(row.id);
      seqs.push(seq.toString());
      prevs.push(prevHash);
      hashes.push(hash);
      prevHash = hash;
    }
    await tx`
      update audit_events a set chain_seq = u.seq, prev_hash = u.prev, hash = u.hash
      from unnest(${ids}::bigint[], ${seqs}::bigint[], ${prevs}::text[], ${hashes}::text[]) as u(id, seq, prev, hash)
      where a.id = u.id`;
    return pending.length;
  });
}

/** Chains every row committed so far (bounded: stops after `maxBatches`); returns how many were chained. */
export async function chainPending(sql: Sql, maxBatches = 10_000, batchSize = APPEND_BATCH): Promise<number> {
  let total = 0;
  for (let i = 0; i < maxBatches; i++) {
    const n = await chainBatch(sql, batchSize);
    total += n;
    if (n < batchSize) break;
  }
  return total;
}

/** Chains whatever has committed, then verifies the whole chain: what the admin endpoint and the SOC 2 control report. */
export async function chainAndVerify(sql: Sql): Promise<ChainReport> {
  await chainPending(sql);
  return verifyAuditChain(sql);
}
