// SQL of tracking and unsubscribes: the sends hits name (locked, so one send's hits are judged one batch at a time), their recent clicks and campaign
// recipients, the events, first-open/click stamps and campaign counters.
import type { Queryable } from '../../db/connection.js';
import type { SendSource } from '../../sending/outbound-log/send-sources.js';
import { enqueueFeedEvents } from '../../webhooks/events/outbox.js';
import { writeEvents } from '../events/queries.js';

/** What a hit needs of its send: who and what it was, its campaign, and when it was delivered. */
export interface TrackedSend {
  id: string;
  tenant_id: string;
  to_email: string;
  message_id: string;
  campaign_id: string | null;
  campaign_variant: string | null;
  contact_id: string | null;
  source: SendSource;
  created_at: Date;
  /** The first delivered attempt; null before (or without) delivery. */
  delivered_at: Date | null;
}

/**
 * The sends, locked (FOR NO KEY UPDATE, in id order so two batches never deadlock): every writer of a send's
 * engagement (hits in any process, unsubscribes) takes its turn, so "first open" and "every link clicked" are
 * judged on everything committed before.
 */
export async function lockTrackedSends(db: Queryable, ids: readonly string[]): Promise<TrackedSend[]> {
  return db<TrackedSend[]>`
    select s.id, s.tenant_id, s.to_email, s.message_id, s.campaign_id, s.campaign_variant, s.contact_id, s.source, s.created_at,
      (select min(a.attempted_at) from send_attempts a where a.send_id = s.id and a.outcome = 'delivered') as delivered_at
    from sends s where s.id = any(${ids}::uuid[])
    order by s.id
    for no key update of s`;
}

export interface RecentClick {
  id: string;
  send_id: string;
  url: string;
  scanner: boolean;
  occurred_at: Date;
}

/** The sends' clicks since `since` (for the "every link at once" rule). */
export async function recentClicks(db: Queryable, sendIds: readonly string[], since: Date): Promise<RecentClick[]> {
  if (sendIds.length === 0) return [];
  return recentClicksQuery(db, sendIds, since);
}

/** recentClicks's statement, not yet sent (its plan test EXPLAINs this very query). */
export function recentClicksQuery(db: Queryable, sendIds: readonly string[], since: Date) {
  return db<RecentClick[]>`
    select id, send_id, coalesce(detail ->> 'url', '') as url, coalesce((detail ->> 'scanner')::boolean, false) as scanner, occurred_at
    from events
    where send_id = any(${sendIds}::uuid[]) and type = 'click' and occurred_at >= ${since}
    order by occurred_at, id`;
}

export interface RecentOpen {
  send_id: string;
  machine: boolean;
  occurred_at: Date;
}

/** The sends' opens since `since` (for the repeat-open rule): the index on (send_id, type, occurred_at) serves it. */
export async function recentOpens(db: Queryable, sendIds: readonly string[], since: Date): Promise<RecentOpen[]> {
  if (sendIds.length === 0) return [];
  return db<RecentOpen[]>`
    select send_id, coalesce((detail ->> 'machine')::boolean, false) as machine, occurred_at
    from events
    where send_id = any(${sendIds}::uuid[]) and type = 'open' and occurred_at >= ${since}
    order by occurred_at, id`;
}

/** The unique-count stamps of a campaign recipient. */
export interface RecipientStamps {
  send_id: string;
  campaign_id: string;
  contact_id: string;
  first_open_at: Date | null;
  first_human_open_at: Date | null;
  first_click_at: Date | null;
  first_human_click_at: Date | null;
  /** The contact's country now ('' without one), for the campaign's unique counts per country. */
  country: string;
}

export async function recipientStamps(db: Queryable, sendIds: readonly string[]): Promise<RecipientStamps[]> {
  if (sendIds.length === 0) return [];
  return db<RecipientStamps[]>`
    select r.send_id, r.campaign_id, r.contact_id, r.first_open_at, r.first_human_open_at, r.first_click_at, r.first_human_click_at,
      coalesce(p.country, '') as country
    from campaign_recipients r left join contacts p on p.id = r.contact_id and p.tenant_id = r.tenant_id
    where r.send_id = any(${sendIds}::uuid[])`;
}

/** Writes the stamps as given (their sends are locked: nobody else changes them meanwhile). */
export async function writeRecipientStamps(db: Queryable, rows: readonly RecipientStamps[]): Promise<void> {
  if (rows.length === 0) return;
  await db`
    update campaign_recipients r set
      first_open_at = v.first_open_at, first_human_open_at = v.first_human_open_at,
      first_click_at = v.first_click_at, first_human_click_at = v.first_human_click_at
    from jsonb_to_recordset(${db.json(rows as never)}) as v(send_id uuid, first_open_at timestamptz, first_human_open_at timestamptz,
      first_click_at timestamptz, first_human_click_at timestamptz)
    where r.send_id = v.send_id`;
}

export const STAT_COUNTERS = [
  'total_opens',
  'unique_opens',
  'unique_human_opens',
  'total_clicks',
  'unique_clicks',
  'unique_human_clicks',
  'unsubscribes',
] as const;
export type StatCounter = (typeof STAT_COUNTERS)[number];

/** Changes to one campaign_stats row (variant '' outside an A/B test portion); a counter may go down (a click reclassified). */
export type StatDelta = { campaign_id: string; variant: string } & Partial<Record<StatCounter, number>>;

/**
 * Adds the deltas, creating missing rows, in key order (the order by of the select: rows are written in it), the
 * order the events trigger (migration 033) writes campaign_stats in, so concurrent writers lock rows in one order.
 */
export async function addCampaignStats(db: Queryable, deltas: readonly StatDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  const rows = deltas.map((d) => Object.fromEntries([['campaign_id', d.campaign_id], ['variant', d.variant], ...STAT_COUNTERS.map((c) => [c, d[c] ?? 0])]));
  await db`
    insert into campaign_stats (campaign_id, variant, total_opens, unique_opens, unique_human_opens, total_clicks, unique_clicks, unique_human_clicks,
                                unsubscribes)
    select v.campaign_id, v.variant, v.total_opens, v.unique_opens, v.unique_human_opens, v.total_clicks, v.unique_clicks, v.unique_human_clicks, v.unsubscribes
    from jsonb_to_recordset(${db.json(rows as never)}) as v(campaign_id uuid, variant text, total_opens bigint, unique_opens bigint,
      unique_human_opens bigint, total_clicks bigint, unique_clicks bigint, unique_human_clicks bigint, unsubscribes bigint)
    where exists (select 1 from campaigns c where c.id = v.campaign_id)
    order by v.campaign_id, v.variant
    on conflict (campaign_id, variant) do update set
      total_opens = campaign_stats.total_opens + excluded.total_opens,
      unique_opens = campaign_stats.unique_opens + excluded.unique_opens,
      unique_human_opens = campaign_stats.unique_human_opens + excluded.unique_human_opens,
      total_clicks = campaign_stats.total_clicks + excluded.total_clicks,
      unique_clicks = campaign_stats.unique_clicks + excluded.unique_clicks,
      unique_human_clicks = campaign_stats.unique_human_clicks + excluded.unique_human_clicks,
      unsubscribes = campaign_stats.unsubscribes + excluded.unsubscribes`;
}

export const COUNTRY_COUNTERS = ['unique_opens', 'unique_human_opens', 'unique_clicks', 'unique_human_clicks'] as const;

/** Changes to one campaign_country_stats row (country '' for contacts without one). */
export type CountryDelta = { campaign_id: string; country: string } & Partial<Record<(typeof COUNTRY_COUNTERS)[number], number>>;

/** Adds the deltas per campaign and contact country, creating missing rows, in key order (as addCampaignStats). */
export async function addCountryStats(db: Queryable, deltas: readonly CountryDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  const rows = deltas.map((d) => Object.fromEntries([['campaign_id', d.campaign_id], ['country', d.country], ...COUNTRY_COUNTERS.map((c) => [c, d[c] ?? 0])]));
  await db`
    insert into campaign_country_stats (campaign_id, country, unique_opens, unique_human_opens, unique_clicks, unique_human_clicks)
    select v.campaign_id, v.country, v.unique_opens, v.unique_human_opens, v.unique_clicks, v.unique_human_clicks
    from jsonb_to_recordset(${db.json(rows as never)}) as v(campaign_id uuid, country text, unique_opens bigint, unique_human_opens bigint,
      unique_clicks bigint, unique_human_clicks bigint)
    where exists (select 1 from campaigns c where c.id = v.campaign_id)
    order by v.campaign_id, v.country
    on conflict (campaign_id, country) do update set
      unique_opens = campaign_country_stats.unique_opens + excluded.unique_opens,
      unique_human_opens = campaign_country_stats.unique_human_opens + excluded.unique_human_opens,
      unique_clicks = campaign_country_stats.unique_clicks + excluded.unique_clicks,
      unique_human_clicks = campaign_country_stats.unique_human_clicks + excluded.unique_human_clicks`;
}

/** An engagement event with its id chosen beforehand (a batch committed again after a lost reply writes nothing twice). */
export interface EngagementEvent {
  id: string;
  tenant_id: string;
  type: 'open' | 'click' | 'unsubscribe';
  send_id: string;
  message_id: string;
  recipient: string;
  detail: Record<string, unknown>;
  occurred_at: Date;
  campaign_id: string | null;
  contact_id: string | null;
}

/** Inserts the events and queues them for the tenant's event webhooks (a look-up, then the writes). */
export async function insertEngagementEvents(db: Queryable, events: readonly EngagementEvent[]): Promise<void> {
  if (events.length === 0) return;
  await writeEvents(db, events);
  await enqueueFeedEvents(
    db,
    events.map((e) => ({ ...e, subtype: null })),
  );
}

/** Which of these event ids are stored. */
export async function storedEventIds(db: Queryable, ids: readonly string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  const rows = await db<{ id: string }[]>`select id from events where id = any(${ids}::uuid[])`;
  return rows.map((r) => r.id);
}

/** Flags earlier clicks as a scanner's once the "every link at once" rule sees the whole burst. */
export async function flagScannerClicks(db: Queryable, ids: readonly string[], reason: string): Promise<void> {
  if (ids.length === 0) return;
  await db`
    update events set detail = detail || jsonb_build_object('scanner', true,
      'reasons', coalesce(detail -> 'reasons', '[]'::jsonb) || to_jsonb(${reason}::text))
    where id = any(${ids}::uuid[]) and type = 'click'`;
}

/** Unsubscribes a live contact of the tenant (status and unsubscribed_at); false when it was not active. */
export async function unsubscribeContact(db: Queryable, tenantId: string, contactId: string, at: Date): Promise<boolean> {
  const rows = await db`
    update contacts set status = 'unsubscribed', unsubscribed_at = ${at}, updated_at = ${at}
    where tenant_id = ${tenantId} and id = ${contactId} and status = 'active'`;
  return rows.count > 0;
}

/** Attributes a stored unsubscribe mail to the send's tenant (its data goes with the tenant's). */
export async function attributeUnsubscribeMail(db: Queryable, recipientId: string, tenantId: string): Promise<void> {
  await db`update inbound_recipients set tenant_id = ${tenantId} where id = ${recipientId} and kind = 'unsubscribe' and tenant_id is null`;
}

export interface UnsubscribeMail {
  id: string;
  recipient: string;
  kind: string;
  inbound_message_id: string;
  received_at: Date;
}

export async function loadUnsubscribeMail(db: Queryable, recipientId: string): Promise<UnsubscribeMail | undefined> {
  const [row] = await db<UnsubscribeMail[]>`
    select r.id, r.recipient, r.kind, r.message_id as inbound_message_id, m.received_at
    from inbound_recipients r join inbound_messages m on m.id = r.message_id
    where r.id = ${recipientId}`;
  return row;
}

/** The recipient address of a send, for the unsubscribe page (undefined: no such send). */
export async function sendRecipient(db: Queryable, sendId: string): Promise<string | undefined> {
  const [row] = await db<{ to_email: string }[]>`select to_email from sends where id = ${sendId}`;
  return row?.to_email;
}

/** The tenant of a send (a click link minted before tokens named it), or undefined: no such send. */
export async function sendTenant(db: Queryable, sendId: string): Promise<string | undefined> {
  const [row] = await db<{ tenant_id: string }[]>`select tenant_id from sends where id = ${sendId}`;
  return row?.tenant_id;
}
