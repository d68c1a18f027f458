// SQL of campaign analytics: the kept counters (per variant, per hour, per URL, per country), the campaign's event feed, and the A/B finalize (winner
// declared, held remainder released).
import type { Queryable } from '../db/connection.js';
import type { EventRow, EventType } from '../engagement/events/queries.js';

/** The counters of campaign_stats that analytics read, summed over a campaign's variants (or for one variant). */
export interface StatCounters {
  sent: number;
  delivered: number;
  deferred: number;
  failed: number;
  hard_bounces: number;
  soft_bounces: number;
  complaints: number;
  unsubscribes: number;
  total_opens: number;
  unique_opens: number;
  unique_human_opens: number;
  total_clicks: number;
  unique_clicks: number;
  unique_human_clicks: number;
}

export const STAT_COLUMNS = [
  'sent',
  'delivered',
  'deferred',
  'failed',
  'hard_bounces',
  'soft_bounces',
  'complaints',
  'unsubscribes',
  'total_opens',
  'unique_opens',
  'unique_human_opens',
  'total_clicks',
  'unique_clicks',
  'unique_human_clicks',
] as const satisfies readonly (keyof StatCounters)[];

export const ZERO_COUNTERS = Object.fromEntries(STAT_COLUMNS.map((c) => [c, 0])) as unknown as StatCounters;

const sums = (db: Queryable) => STAT_COLUMNS.map((c, i) => db`${i === 0 ? db`` : db`,`} coalesce(sum(${db(c)}), 0)::float8 as ${db(c)}`);

/** The tenant's campaigns among `ids` (others' and unknown ids left out), with their counters summed over variants. */
export async function tenantCampaignCounters(
  db: Queryable,
  tenantId: string,
  ids: readonly string[],
): Promise<(StatCounters & { id: string; name: string; status: string })[]> {
  if (ids.length === 0) return [];
  return db<(StatCounters & { id: string; name: string; status: string })[]>`
    select c.id, c.name, c.status, ${sums(db)}
    from campaigns c left join campaign_stats s on s.campaign_id = c.id
    where c.tenant_id = ${tenantId} and c.id = any(${db.array([...ids])}::uuid[])
    group by c.id, c.name, c.status, c.created_at
    order by c.created_at desc, c.id desc`;
}

/** One campaign's counters per variant ('' for no test or the remainder, 'a', 'b'). */
export async function variantCounters(db: Queryable, campaignId: string): Promise<Map<string, StatCounters>> {
  const rows = await db<(StatCounters & { variant: string })[]>`
    select variant, ${sums(db)} from campaign_stats where campaign_id = ${campaignId} group by variant`;
  return new Map(rows.map(({ variant, ...counters }) => [variant, counters]));
}

export interface CountryRow {
  country: string;
  unique_opens: number;
  unique_human_opens: number;
  unique_clicks: number;
  unique_human_clicks: number;
}

/** Unique engagement per contact country, most opens first (at most `limit` countries). */
export async function countryCounters(db: Queryable, campaignId: string, limit: number): Promise<CountryRow[]> {
  return db<CountryRow[]>`
    select country, unique_opens::float8, unique_human_opens::float8, unique_clicks::float8, unique_human_clicks::float8
    from campaign_country_stats
    where campaign_id = ${campaignId} and (unique_opens > 0 or unique_clicks > 0)
    order by unique_opens desc, unique_clicks desc, country
    limit ${limit}`;
}

export interface HourRow {
  hour: Date;
  delivered: number;
  opens: number;
  clicks: number;
  unsubscribes: number;
  bounces: number;
  complaints: number;
}

/** The campaign's hourly counts from `since` (an hour boundary) on. */
export async function hourlyCounters(db: Queryable, campaignId: string, since: Date): Promise<HourRow[]> {
  return db<HourRow[]>`
    select hour, delivered::float8, opens::float8, clicks::float8, unsubscribes::float8, bounces::float8, complaints::float8
    from campaign_hourly_stats where campaign_id = ${campaignId} and hour >= ${since}
    order by hour`;
}

/** The most clicked destination URLs of the campaign (ties by URL, so the order is stable). */
export async function topLinks(db: Queryable, campaignId: string, limit: number): Promise<{ url: string; clicks: number }[]> {
  return db<{ url: string; clicks: number }[]>`
    select url, clicks::float8 from campaign_link_stats
    where campaign_id = ${campaignId} and clicks > 0
    order by clicks desc, url
    limit ${limit}`;
}

export interface CampaignEventFilter {
  type?: EventType | undefined;
  since?: Date | undefined;
  recipient?: string | undefined;
  limit: number;
  after?: { at: Date; id: string } | undefined;
}

/** The campaign's events, newest first (keyset pages over events_campaign_idx). */
export async function campaignEvents(db: Queryable, tenantId: string, campaignId: string, f: CampaignEventFilter): Promise<EventRow[]> {
  return db<EventRow[]>`
    select id, tenant_id, type, subtype, send_id, message_id, recipient, detail, occurred_at, campaign_id, contact_id from events
    where campaign_id = ${campaignId} and tenant_id = ${tenantId}
      ${f.type ? db`and type = ${f.type}` : db``}
      ${f.since ? db`and occurred_at >= ${f.since}` : db``}
      ${f.recipient ? db`and recipient = ${f.recipient}` : db``}
      ${f.after ? db`and (occurred_at, id) < (${f.after.at}, ${f.after.id})` : db``}
    order by occurred_at desc, id desc
    limit ${f.limit}`;
}

/** Declares the winner, only while none is (so one finalize wins a race); clears an ab_winner wait. */
export async function declareWinner(db: Queryable, campaignId: string, winner: 'a' | 'b', at: Date): Promise<boolean> {
  const rows = await db`
    update campaigns set ab_winner = ${winner}, ab_winner_declared_at = ${at}, updated_at = ${at},
      waiting_reason = case when waiting_reason = 'ab_winner' then null else waiting_reason end,
      waiting_until = case when waiting_reason = 'ab_winner' then null else waiting_until end
    where id = ${campaignId} and ab_winner is null
    returning id`;
  return rows.length > 0;
}

/**
 * Up to `limit` held recipients become pending, at new positions after the last one given out (the fan-out claims
 * them in batches next, as it did the test portion); returns how many. In chunks, so releasing the remainder of a
 * million-recipient test never holds one long transaction (rows another releaser holds are skipped: it releases them).
 */
export async function releaseHeld(db: Queryable, campaignId: string, limit: number): Promise<number> {
  // Materialized CTEs: the chunk is picked once (a subquery in IN may be rescanned and pick more than `limit`); the
  // campaign row's update takes its lock, so two releasers number their chunks one after the other.
  const [row] = await db<{ n: number }[]>`
    with picked as materialized (
      select contact_id, row_number() over (order by contact_id) as rn from (
        select contact_id from campaign_recipients where campaign_id = ${campaignId} and status = 'held'
        order by contact_id limit ${limit} for update skip locked
      ) h
    ), base as materialized (
      update campaigns set recipient_seq = recipient_seq + (select count(*) from picked)
      where id = ${campaignId} and exists (select 1 from picked)
      returning recipient_seq - (select count(*) from picked) as seq
    ), changed as (
      update campaign_recipients r set status = 'pending', seq = (select seq from base) + p.rn
      from picked p where r.campaign_id = ${campaignId} and r.contact_id = p.contact_id and r.status = 'held'
      returning 1
    )
    select count(*)::int as n from changed`;
  return row!.n;
}

/** How many recipients are held for the winner. */
export async function heldCount(db: Queryable, campaignId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from campaign_recipients where campaign_id = ${campaignId} and status = 'held'`;
  return row!.n;
}
