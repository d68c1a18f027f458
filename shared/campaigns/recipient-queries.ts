// SQL for a campaign's recipients: materializing a target page with its skip reasons and positions, the A/B split, the counters that grow with them, and the
// progress counters read back. Batches over the positions are in batch-queries.ts.
import type { Queryable } from '../db/connection.js';

export const SKIP_REASONS = ['unsubscribed', 'deleted', 'suppressed', 'md5_listed', 'invalid', 'cancelled'] as const;
export type SkipReason = (typeof SKIP_REASONS)[number];

/**
 * The counters of the rows a data-modifying CTE named `changed` returned (columns variant, targeted, status,
 * skip_reason), added to campaign_stats per variant in the same statement: the counts commit with the rows.
 */
export function countChanged(db: Queryable, campaignId: string) {
  const skipped = (reason: SkipReason) => db`count(*) filter (where status = 'skipped' and skip_reason = ${reason})`;
  return db`
    insert into campaign_stats (campaign_id, variant, targeted, queued, skipped_unsubscribed, skipped_deleted, skipped_suppressed,
                                skipped_md5, skipped_invalid, skipped_cancelled)
    select ${campaignId}::uuid, variant, sum(targeted), count(*) filter (where status = 'queued'), ${skipped('unsubscribed')},
           ${skipped('deleted')}, ${skipped('suppressed')}, ${skipped('md5_listed')}, ${skipped('invalid')}, ${skipped('cancelled')}
    from changed group by variant
    on conflict (campaign_id, variant) do update set
      targeted = campaign_stats.targeted + excluded.targeted,
      queued = campaign_stats.queued + excluded.queued,
      skipped_unsubscribed = campaign_stats.skipped_unsubscribed + excluded.skipped_unsubscribed,
      skipped_deleted = campaign_stats.skipped_deleted + excluded.skipped_deleted,
      skipped_suppressed = campaign_stats.skipped_suppressed + excluded.skipped_suppressed,
      skipped_md5 = campaign_stats.skipped_md5 + excluded.skipped_md5,
      skipped_invalid = campaign_stats.skipped_invalid + excluded.skipped_invalid,
      skipped_cancelled = campaign_stats.skipped_cancelled + excluded.skipped_cancelled`;
}

/**
 * Copies one page of the target (contact ids of the tenant) into the campaign's recipients in one statement, each with
 * a fresh send id and its position (`seqBase` + its place in the page), deciding in SQL who is skipped and why (first
 * match wins): a deleted contact, an unsubscribed one, one without a usable address (invalid), an address on the
 * suppression list (by hash, so erased people stay out), an address on the campaign's MD5 list. A contact already
 * there is left alone (a page retried after a crash). The campaign's targeted and skipped counters grow in the same
 * statement.
 */
export async function materializePage(
  db: Queryable,
  c: { campaignId: string; tenantId: string; md5ListId: string | null; seqBase: number },
  contactIds: readonly string[],
): Promise<void> {
  if (contactIds.length === 0) return;
  await db`
    with page as (
      select p.id, p.email, p.email_hash, p.status, q.n
      from unnest(${db.array([...contactIds])}::uuid[]) with ordinality as q(id, n)
      join contacts p on p.id = q.id and p.tenant_id = ${c.tenantId}
    ), decided as (
      select p.id, p.n, coalesce(p.email, '') as email,
        case
          when p.status = 'deleted' then 'deleted'
          when p.status = 'unsubscribed' then 'unsubscribed'
          when p.email is null or p.email !~ '^[^@[:space:]]+@[^@[:space:]]+$' then 'invalid'
          when exists (select 1 from suppressions s where s.tenant_id = ${c.tenantId} and s.email_hash = p.email_hash) then 'suppressed'
          when exists (
            select 1 from md5_lists l join md5_list_entries e on e.list_id = l.id
            where l.id = ${c.md5ListId}::uuid and l.tenant_id = ${c.tenantId} and e.hash = decode(md5(lower(p.email)), 'hex')
          ) then 'md5_listed'
        end as skip_reason
      from page p
    ), changed as (
      insert into campaign_recipients (campaign_id, contact_id, tenant_id, email, status, skip_reason, send_id, seq)
      select ${c.campaignId}, d.id, ${c.tenantId}, d.email, case when d.skip_reason is null then 'pending' else 'skipped' end, d.skip_reason,
             gen_random_uuid(), ${c.seqBase}::bigint + d.n
      from decided d
      on conflict (campaign_id, contact_id) do nothing
      returning '' as variant, 1 as targeted, status, skip_reason
    )
    ${countChanged(db, c.campaignId)}`;
}

/**
 * The A/B split, once every page is in: of the recipients to be sent, `pct` % (rounded, at least one per variant when
 * there are two) in a random but repeatable order (md5 of contact and campaign) go to a and b, half each (a gets the
 * odd one), and the rest are held for the winner. Moves their targeted counts to the variants.
 */
export async function assignVariants(db: Queryable, campaignId: string, pct: number): Promise<{ a: number; b: number; held: number }> {
  const [row] = await db<{ a: number; b: number; held: number }[]>`
    with ranked as (
      select contact_id, row_number() over (order by md5(contact_id::text || campaign_id::text), contact_id) as rn, count(*) over () as n
      from campaign_recipients where campaign_id = ${campaignId} and status = 'pending'
    ), sized as (
      select contact_id, rn, greatest(round(n * ${pct}::numeric / 100), least(n, 2)) as test_n from ranked
    ), changed as (
      update campaign_recipients r set
        variant = case when s.rn <= ceil(s.test_n / 2.0) then 'a' when s.rn <= s.test_n then 'b' end,
        status = case when s.rn <= s.test_n then 'pending' else 'held' end
      from sized s where r.campaign_id = ${campaignId} and r.contact_id = s.contact_id
      returning r.variant, r.status
    )
    select count(*) filter (where variant = 'a')::int as a, count(*) filter (where variant = 'b')::int as b,
           count(*) filter (where status = 'held')::int as held
    from changed`;
  const split = row!;
  if (split.a + split.b > 0) {
    await db`
      insert into campaign_stats (campaign_id, variant, targeted)
      values (${campaignId}, 'a', ${split.a}), (${campaignId}, 'b', ${split.b}), (${campaignId}, '', ${-(split.a + split.b)})
      on conflict (campaign_id, variant) do update set targeted = campaign_stats.targeted + excluded.targeted`;
  }
  return split;
}

/** The statuses of those send ids that exist (a recipient is done iff its send exists). */
export async function existingSends(db: Queryable, sendIds: readonly string[]): Promise<Map<string, string>> {
  if (sendIds.length === 0) return new Map();
  const rows = await db<{ id: string; status: string }[]>`select id, status from sends where id = any(${db.array([...sendIds])}::uuid[])`;
  return new Map(rows.map((r) => [r.id, r.status]));
}

export interface CampaignCounters {
  targeted: number;
  skipped_unsubscribed: number;
  skipped_deleted: number;
  skipped_suppressed: number;
  skipped_md5: number;
  skipped_invalid: number;
  skipped_cancelled: number;
  queued: number;
  sent: number;
  delivered: number;
  deferred: number;
  failed: number;
}

const COUNTER_COLUMNS = [
  'targeted',
  'skipped_unsubscribed',
  'skipped_deleted',
  'skipped_suppressed',
  'skipped_md5',
  'skipped_invalid',
  'skipped_cancelled',
  'queued',
  'sent',
  'delivered',
  'deferred',
  'failed',
] as const satisfies readonly (keyof CampaignCounters)[];

/** The progress counters of campaigns, summed over their variants (zeros for a campaign without any yet). */
export async function campaignCounters(db: Queryable, campaignIds: readonly string[]): Promise<Map<string, CampaignCounters>> {
  const out = new Map<string, CampaignCounters>();
  if (campaignIds.length === 0) return out;
  const sums = COUNTER_COLUMNS.map((c, i) => db`${i === 0 ? db`` : db`,`} coalesce(sum(${db(c)}), 0)::float8 as ${db(c)}`);
  const rows = await db<(CampaignCounters & { campaign_id: string })[]>`
    select campaign_id, ${sums} from campaign_stats where campaign_id = any(${db.array([...campaignIds])}::uuid[]) group by campaign_id`;
  for (const row of rows) {
    const { campaign_id, ...counters } = row;
    out.set(campaign_id, counters);
  }
  const zero = Object.fromEntries(COUNTER_COLUMNS.map((c) => [c, 0])) as unknown as CampaignCounters;
  for (const id of campaignIds) if (!out.has(id)) out.set(id, { ...zero });
  return out;
}
