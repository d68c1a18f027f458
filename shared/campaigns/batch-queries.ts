// SQL for a campaign's batches: ranges of recipient positions claimed with a lease, read with what their messages need, completed (deleted, their recipients
// counted as queued) or given back, swept after a cancel.
import type { Queryable, Sql } from '../db/connection.js';
import { PROFILE_COLUMN_NAMES, type ProfileColumn } from '../audiences/contacts/fields.js';
import { countChanged, type SkipReason } from './recipient-queries.js';

/** A claimed range of positions; `claimedUntil` is the claim's token (a worker that lost its claim completes nothing). */
export interface Batch {
  campaignId: string;
  firstSeq: number;
  lastSeq: number;
  claimedUntil: Date;
}

/** The first batch no live claim holds (given back, or left by a dead worker), locked, skipping one another worker is taking. */
const unheldBatch = (db: Queryable, campaignId: string, now: Date) => db`
  select first_seq from campaign_batches
  where campaign_id = ${campaignId} and (claimed_until is null or claimed_until < ${now})
  order by first_seq limit 1 for update skip locked`;

/**
 * Claims a batch until `leaseUntil`: first one left behind (its worker died, or gave it back unfinished), oldest
 * first and skipping those another worker is taking (SKIP LOCKED); else the next `size` positions not yet claimed,
 * while the campaign is sending (the campaign row's lock orders concurrent claims). Undefined: nothing to claim.
 */
export async function claimBatch(sql: Sql, campaignId: string, size: number, now: Date, leaseUntil: Date): Promise<Batch | undefined> {
  return sql.begin(async (tx) => {
    const [left] = await tx<{ first_seq: string; last_seq: string }[]>`
      update campaign_batches b set claimed_until = ${leaseUntil}
      from (${unheldBatch(tx, campaignId, now)}) o
      where b.campaign_id = ${campaignId} and b.first_seq = o.first_seq
      returning b.first_seq, b.last_seq`;
    if (left) return { campaignId, firstSeq: Number(left.first_seq), lastSeq: Number(left.last_seq), claimedUntil: leaseUntil };
    const [c] = await tx<{ fanout_seq: string; recipient_seq: string }[]>`
      select fanout_seq, recipient_seq from campaigns
      where id = ${campaignId} and status = 'sending' and targeted_at is not null and fanout_seq < recipient_seq
      for update`;
    if (!c) return undefined;
    const firstSeq = Number(c.fanout_seq) + 1;
    const lastSeq = Math.min(Number(c.fanout_seq) + size, Number(c.recipient_seq));
    await tx`update campaigns set fanout_seq = ${lastSeq} where id = ${campaignId}`;
    await tx`insert into campaign_batches (campaign_id, first_seq, last_seq, claimed_until) values (${campaignId}, ${firstSeq}, ${lastSeq}, ${leaseUntil})`;
    return { campaignId, firstSeq, lastSeq, claimedUntil: leaseUntil };
  });
}

/** A recipient of a batch, with its contact as it is now (null fields once deleted) and its send's status if it exists. */
export type BatchRecipient = {
  contact_id: string;
  email: string;
  variant: 'a' | 'b' | null;
  send_id: string;
  /** The status of the recipient's send when one exists (sent by an earlier run of the batch), else null. */
  send_status: string | null;
  /** The contact's status now; null when the contact is gone. */
  contact_status: string | null;
  custom_fields: Record<string, unknown> | null;
} & Record<ProfileColumn, string | null>;

/** The batch's recipients still to be sent (not skipped, not held), in position order, in one query. */
export async function batchRecipients(db: Queryable, batch: Batch, tenantId: string): Promise<BatchRecipient[]> {
  const profile = PROFILE_COLUMN_NAMES.map((c, i) => db`${i === 0 ? db`` : db`,`} p.${db(c)}`);
  return db<BatchRecipient[]>`
    select r.contact_id, r.email, r.variant, r.send_id, s.status as send_status, p.status as contact_status, p.custom_fields, ${profile}
    from campaign_recipients r
    left join sends s on s.id = r.send_id
    left join contacts p on p.id = r.contact_id and p.tenant_id = ${tenantId}
    where r.campaign_id = ${batch.campaignId} and r.seq between ${batch.firstSeq} and ${batch.lastSeq} and r.status = 'pending'
    order by r.seq`;
}

/** What a run over a batch came to: who was found skipped (with why), who has a send (sent now or by an earlier run). */
export interface BatchOutcome {
  skipped: readonly { contactId: string; reason: SkipReason }[];
  sent: readonly string[];
  /** Every recipient was sent or skipped: the batch is done. */
  complete: boolean;
}

/**
 * Ends a run over a batch in one transaction, only while this worker's claim stands (else another worker has taken
 * the batch over and will end it; false is returned). The recipients found skipped become skipped with their reasons
 * and are counted. A complete batch is deleted and its sent recipients counted as queued, all of them whichever run
 * sent them, so each is counted once and no recipient row is written for it. An unfinished one (the warm-up cap, the
 * quota, a failure stopped it) is given back for a later run; its sent recipients are marked queued and counted now,
 * so the progress is exact while the campaign waits (and the final count leaves them out).
 */
export async function finishBatch(sql: Sql, batch: Batch, outcome: BatchOutcome): Promise<boolean> {
  return sql.begin(async (tx) => {
    const mine = outcome.complete
      ? await tx`delete from campaign_batches
                 where campaign_id = ${batch.campaignId} and first_seq = ${batch.firstSeq} and claimed_until = ${batch.claimedUntil} returning 1`
      : await tx`update campaign_batches set claimed_until = null
                 where campaign_id = ${batch.campaignId} and first_seq = ${batch.firstSeq} and claimed_until = ${batch.claimedUntil} returning 1`;
    if (mine.length === 0) return false;
    const settled = [
      ...outcome.skipped.map((s) => ({ contactId: s.contactId, status: 'skipped', reason: s.reason as string | null })),
      ...(outcome.complete ? [] : outcome.sent.map((contactId) => ({ contactId, status: 'queued', reason: null }))),
    ];
    if (settled.length > 0) await settle(tx, batch, settled);
    if (outcome.complete) await countQueued(tx, batch);
    return true;
  });
}

/** Marks recipients skipped or queued (only from pending, so nothing is counted twice) and counts them. */
async function settle(db: Queryable, batch: Batch, settled: readonly { contactId: string; status: string; reason: string | null }[]): Promise<void> {
  await db`
    with o as (
      select * from unnest(${db.array(settled.map((s) => s.contactId))}::uuid[], ${db.array(settled.map((s) => s.status))}::text[],
                           ${db.array(settled.map((s) => s.reason) as string[])}::text[]) as o(contact_id, status, skip_reason)
    ), changed as (
      update campaign_recipients r set status = o.status, skip_reason = o.skip_reason
      from o where r.campaign_id = ${batch.campaignId} and r.contact_id = o.contact_id and r.status = 'pending'
      returning coalesce(r.variant, '') as variant, 0 as targeted, r.status, r.skip_reason
    )
    ${countChanged(db, batch.campaignId)}`;
}

/** Counts the batch's sent recipients not counted yet (pending, with a send) as queued, per variant. */
async function countQueued(db: Queryable, batch: Batch): Promise<void> {
  await db`
    insert into campaign_stats (campaign_id, variant, queued)
    select ${batch.campaignId}::uuid, coalesce(r.variant, ''), count(*)
    from campaign_recipients r join sends s on s.id = r.send_id
    where r.campaign_id = ${batch.campaignId} and r.seq between ${batch.firstSeq} and ${batch.lastSeq} and r.status = 'pending'
    group by 2 order by 2
    on conflict (campaign_id, variant) do update set queued = campaign_stats.queued + excluded.queued`;
}

/**
 * After a cancel, one step of the sweep (call until it returns 0): a batch no worker holds is ended as it stands
 * (recipients with a send counted as queued, a dropped one skipped 'suppressed', the rest skipped 'cancelled'), or
 * else up to `limit` recipients never claimed (and the A/B remainder) become skipped 'cancelled'. Batches a live
 * claim holds are left to their worker. Returns how many recipients changed.
 */
export async function sweepCancelled(sql: Sql, campaignId: string, now: Date, limit: number): Promise<number> {
  return sql.begin(async (tx) => {
    const [batch] = await tx<{ first_seq: string; last_seq: string }[]>`
      delete from campaign_batches b
      using (${unheldBatch(tx, campaignId, now)}) o
      where b.campaign_id = ${campaignId} and b.first_seq = o.first_seq
      returning b.first_seq, b.last_seq`;
    if (batch) {
      const range = { campaignId, firstSeq: Number(batch.first_seq), lastSeq: Number(batch.last_seq), claimedUntil: now };
      const [row] = await tx<{ n: number }[]>`
        with target as (
          select r.contact_id, s.status as send_status from campaign_recipients r left join sends s on s.id = r.send_id
          where r.campaign_id = ${campaignId} and r.seq between ${range.firstSeq} and ${range.lastSeq} and r.status = 'pending'
            and (s.id is null or s.status = 'dropped')
        ), changed as (
          update campaign_recipients r set status = 'skipped', skip_reason = case when t.send_status is null then 'cancelled' else 'suppressed' end
          from target t where r.campaign_id = ${campaignId} and r.contact_id = t.contact_id
          returning coalesce(r.variant, '') as variant, 0 as targeted, r.status, r.skip_reason
        ), counted as (${countChanged(tx, campaignId)} returning 1)
        select count(*)::int as n from changed`;
      await countQueued(tx, range);
      // An empty range still counts as a step: the caller goes on until no batch is left.
      return Math.max(1, row!.n);
    }
    const [row] = await tx<{ n: number }[]>`
      with target as (
        select r.contact_id from campaign_recipients r join campaigns c on c.id = r.campaign_id
        where r.campaign_id = ${campaignId} and ((r.status = 'pending' and r.seq > c.fanout_seq) or r.status = 'held')
        limit ${limit}
        for update of r skip locked
      ), changed as (
        update campaign_recipients r set status = 'skipped', skip_reason = 'cancelled'
        from target t where r.campaign_id = ${campaignId} and r.contact_id = t.contact_id
        returning coalesce(r.variant, '') as variant, 0 as targeted, r.status, r.skip_reason
      ), counted as (${countChanged(tx, campaignId)} returning 1)
      select count(*)::int as n from changed`;
    return row!.n;
  });
}

/**
 * What is left of a campaign's fan-out: positions never claimed, batches others hold (and when the first claim ends), batches to take over, the A/B remainder.
 */
export interface FanoutLeft {
  unclaimed: boolean;
  /** The earliest end of a live claim another worker holds; null when none does. */
  claimedUntil: Date | null;
  /** Batches no live claim holds (given back, or left by a dead worker). */
  orphaned: boolean;
  held: boolean;
}

export async function fanoutLeft(db: Queryable, campaignId: string, now: Date): Promise<FanoutLeft> {
  const [row] = await db<{ unclaimed: boolean; claimed_until: Date | null; orphaned: boolean; held: boolean }[]>`
    select c.fanout_seq < c.recipient_seq as unclaimed,
           (select min(claimed_until) from campaign_batches b where b.campaign_id = c.id and b.claimed_until >= ${now}) as claimed_until,
           exists (select 1 from campaign_batches b where b.campaign_id = c.id and (b.claimed_until is null or b.claimed_until < ${now})) as orphaned,
           exists (select 1 from campaign_recipients r where r.campaign_id = c.id and r.status = 'held') as held
    from campaigns c where c.id = ${campaignId}`;
  return { unclaimed: row?.unclaimed ?? false, claimedUntil: row?.claimed_until ?? null, orphaned: row?.orphaned ?? false, held: row?.held ?? false };
}
