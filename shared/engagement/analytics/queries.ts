// SQL of analytics: refreshing the hourly rollups from the events, reading them (rollup buckets, per-domain outcomes), cohort activity, and the automatic
// per-provider suppressions.
import type { Queryable, Sql } from '../../db/connection.js';

/** A human open or click: machine opens and scanner clicks (flagged by the tracking recorder) are left out. */
const HUMAN = `not coalesce((e.detail ->> 'machine')::boolean, false) and not coalesce((e.detail ->> 'scanner')::boolean, false)`;

/** One hour's counts of analytics_hourly, over `events e` of that hour: the rollup's rule, and the live read's of hours not rolled up yet. */
const HOURLY_COUNTS = `count(*) as n,
  count(*) filter (where e.type = 'send' and coalesce(e.detail ->> 'status', '') <> 'dropped') as sent,
  count(*) filter (where e.type = 'delivered') as delivered,
  count(*) filter (where e.type = 'bounce') as bounced,
  count(*) filter (where e.type = 'open' and ${HUMAN}) as opened,
  count(*) filter (where e.type = 'click' and ${HUMAN}) as clicked,
  count(*) filter (where e.type = 'complaint') as complained,
  count(*) filter (where e.type = 'open') as opened_all,
  count(*) filter (where e.type = 'click') as clicked_all`;

/** Hours of a read not rolled up yet (marked stale) counted from the events on read, the latest first, at most this many. */
export const LIVE_HOURS_MAX = 6;

/**
 * Claims up to `limit` stale hours and recomputes both rollups of those hours from the events, in one transaction:
 * the claim deletes the hours' marks (several per hour: writers append them, migration 103), skipping marks another
 * claim holds, then each statement reads the events as committed by then (a mark committed after the claim stays for
 * the next batch). Returns how many hours were recomputed (0: nothing stale).
 */
export async function refreshStaleHours(sql: Sql, limit: number): Promise<number> {
  return sql.begin(async (tx) => {
    const claimed = await tx<{ tenant_id: string; hour: Date }[]>`
      with picked as (
        select tenant_id, hour from analytics_stale_hours group by tenant_id, hour order by tenant_id, hour limit ${limit}
      ), locked as (
        -- Lateral: each picked hour's marks through the (tenant_id, hour) index, not a scan of every mark.
        select m.ctid from picked p
        cross join lateral (select s.ctid from analytics_stale_hours s where s.tenant_id = p.tenant_id and s.hour = p.hour for update skip locked) m
      ), taken as (
        delete from analytics_stale_hours s where s.ctid in (select ctid from locked) returning s.tenant_id, s.hour
      )
      select distinct tenant_id, hour from taken`;
    if (claimed.length === 0) return 0;
    claimed.sort((a, b) => (a.tenant_id === b.tenant_id ? a.hour.getTime() - b.hour.getTime() : a.tenant_id < b.tenant_id ? -1 : 1));
    const tenants = claimed.map((c) => c.tenant_id);
    const hours = claimed.map((c) => c.hour.toISOString());
    const keys = tx`unnest(${tenants}::uuid[], ${hours}::timestamptz[]) as k(tenant_id, hour)`;
    await tx`delete from analytics_hourly h using ${keys} where h.tenant_id = k.tenant_id and h.hour = k.hour`;
    await tx`delete from analytics_domain_hourly h using ${keys} where h.tenant_id = k.tenant_id and h.hour = k.hour`;
    // Lateral: each hour is one index range scan of events_tenant_idx, whatever the planner guesses of the key list.
    await tx.unsafe(
      `insert into analytics_hourly (tenant_id, hour, sent, delivered, bounced, opened, clicked, complained, opened_all, clicked_all)
      select k.tenant_id, k.hour, c.sent, c.delivered, c.bounced, c.opened, c.clicked, c.complained, c.opened_all, c.clicked_all
      from unnest($1::uuid[], $2::timestamptz[]) as k(tenant_id, hour)
      cross join lateral (
        select ${HOURLY_COUNTS}
        from events e
        where e.tenant_id = k.tenant_id and e.occurred_at >= k.hour and e.occurred_at < k.hour + interval '1 hour'
      ) c
      where c.n > 0`,
      [tenants, hours],
    );
    await tx.unsafe(
      `insert into analytics_domain_hourly (tenant_id, hour, domain, sent, delivered, deferred, bounced, complained, engaged)
      select k.tenant_id, k.hour, d.domain, d.sent, d.delivered, d.deferred, d.bounced, d.complained, d.engaged
      from unnest($1::uuid[], $2::timestamptz[]) as k(tenant_id, hour)
      cross join lateral (
        select lower(substring(e.recipient from '@([^@]*)$')) as domain,
          count(*) filter (where e.type = 'send' and coalesce(e.detail ->> 'status', '') <> 'dropped') as sent,
          count(*) filter (where e.type = 'delivered') as delivered,
          count(*) filter (where e.type = 'deferred') as deferred,
          count(*) filter (where e.type = 'bounce') as bounced,
          count(*) filter (where e.type = 'complaint') as complained,
          count(distinct coalesce(e.send_id, e.id)) filter (where e.type in ('open', 'click') and ${HUMAN}) as engaged
        from events e
        where e.tenant_id = k.tenant_id and e.occurred_at >= k.hour and e.occurred_at < k.hour + interval '1 hour'
          and e.type in ('send', 'delivered', 'deferred', 'bounce', 'complaint', 'open', 'click') and e.recipient like '%@%'
        group by 1
      ) d`,
      [tenants, hours],
    );
    return claimed.length;
  });
}

/** How many (tenant, hour) rollups wait for the worker (for its tick result and tests). */
export async function countStaleHours(db: Queryable): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from (select distinct tenant_id, hour from analytics_stale_hours) h`;
  return row!.n;
}

export interface RollupBucket {
  start: Date;
  sent: number;
  delivered: number;
  bounced: number;
  opened: number;
  clicked: number;
  complained: number;
}

/**
 * Buckets of `unit` (hour or day, UTC) from the one holding `since` to the one holding `until`, each one present
 * (zeros where nothing happened), summed from analytics_hourly rows in [since's bucket, until]: an index range scan
 * of at most 2,160 rows (90 days of hours) per call. The latest LIVE_HOURS_MAX hours of the range the rollup worker
 * has not refreshed since their last event (marked in analytics_stale_hours: the current hour, right after a send)
 * are counted from their events instead, each one index range scan: a read right after a send counts it.
 */
export async function rollupBuckets(
  db: Queryable,
  tenantId: string,
  w: { since: Date; until: Date; unit: 'hour' | 'day'; includeMachine: boolean },
): Promise<RollupBucket[]> {
  const step = w.unit === 'hour' ? '1 hour' : '1 day';
  return db<RollupBucket[]>`
    with series as (
      select generate_series(date_trunc(${w.unit}, ${w.since}::timestamptz, 'UTC'), ${w.until}::timestamptz, ${step}::interval) as start
    ), stale as (
      select distinct hour from analytics_stale_hours
      where tenant_id = ${tenantId} and hour >= date_trunc('hour', date_trunc(${w.unit}, ${w.since}::timestamptz, 'UTC')) and hour <= ${w.until}
      order by hour desc limit ${LIVE_HOURS_MAX}
    ), live as (
      select k.hour, c.sent, c.delivered, c.bounced, c.complained, c.opened, c.clicked, c.opened_all, c.clicked_all
      from stale k
      cross join lateral (
        select ${db.unsafe(HOURLY_COUNTS)}
        from events e
        where e.tenant_id = ${tenantId} and e.occurred_at >= k.hour and e.occurred_at < k.hour + interval '1 hour'
      ) c
    ), hours as (
      select h.hour, h.sent, h.delivered, h.bounced, h.complained, h.opened, h.clicked, h.opened_all, h.clicked_all
      from analytics_hourly h
      where h.tenant_id = ${tenantId} and h.hour >= date_trunc(${w.unit}, ${w.since}::timestamptz, 'UTC') and h.hour <= ${w.until}
        and h.hour not in (select hour from live)
      union all
      select * from live
    ), sums as (
      select date_trunc(${w.unit}, h.hour, 'UTC') as start,
        sum(h.sent) as sent, sum(h.delivered) as delivered, sum(h.bounced) as bounced, sum(h.complained) as complained,
        sum(case when ${w.includeMachine}::boolean then h.opened_all else h.opened end) as opened,
        sum(case when ${w.includeMachine}::boolean then h.clicked_all else h.clicked end) as clicked
      from hours h
      group by 1
    )
    select s.start, coalesce(m.sent, 0)::int as sent, coalesce(m.delivered, 0)::int as delivered,
      coalesce(m.bounced, 0)::int as bounced, coalesce(m.opened, 0)::int as opened,
      coalesce(m.clicked, 0)::int as clicked, coalesce(m.complained, 0)::int as complained
    from series s left join sums m on m.start = s.start
    order by s.start`;
}

export interface DomainOutcomes {
  domain: string;
  sent: number;
  delivered: number;
  deferred: number;
  bounced: number;
  complained: number;
  engaged: number;
}

/**
 * Outcomes per recipient domain over the hours in [since, until], from analytics_domain_hourly: one tenant's, or every
 * tenant's together (tenantId null: the platform overview).
 */
export async function domainOutcomes(db: Queryable, tenantId: string | null, since: Date, until: Date): Promise<DomainOutcomes[]> {
  return db<DomainOutcomes[]>`
    select domain, sum(sent)::int as sent, sum(delivered)::int as delivered, sum(deferred)::int as deferred, sum(bounced)::int as bounced,
      sum(complained)::int as complained, sum(engaged)::int as engaged
    from analytics_domain_hourly
    where ${tenantId === null ? db`true` : db`tenant_id = ${tenantId}`} and hour >= date_trunc('hour', ${since}::timestamptz, 'UTC') and hour <= ${until}
    group by domain`;
}

export type CohortMetric = 'sent' | 'opened' | 'clicked';
const METRIC_EVENT: Record<CohortMetric, string> = { sent: 'send', opened: 'open', clicked: 'click' };

export interface CohortCell {
  cohort: number;
  offset: number;
  contacts: number;
}

/**
 * Contacts acquired (created) per week since `start` (week 0 = [start, start + 7 days)), and per acquisition week and
 * week offset, how many of them had at least one event of the metric (human only for opens and clicks, not dropped
 * for sends). Events reach contacts by address; the tenant's events of the window come from events_engagement_window_idx.
 */
export async function cohortActivity(
  db: Queryable,
  tenantId: string,
  metric: CohortMetric,
  start: Date,
  until: Date,
): Promise<{ sizes: { cohort: number; contacts: number }[]; cells: CohortCell[] }> {
  const filter =
    metric === 'sent'
      ? db`coalesce(e.detail ->> 'status', '') <> 'dropped'`
      : db`not coalesce((e.detail ->> 'machine')::boolean, false) and not coalesce((e.detail ->> 'scanner')::boolean, false)`;
  const cohort = db`
    select id, email, floor(extract(epoch from (created_at - ${start}::timestamptz)) / 604800)::int as cohort
    from contacts where tenant_id = ${tenantId} and created_at >= ${start} and created_at <= ${until} and email is not null`;
  const sizes = await db<{ cohort: number; contacts: number }[]>`
    with c as (${cohort}) select cohort, count(*)::int as contacts from c group by cohort order by cohort`;
  if (sizes.length === 0) return { sizes, cells: [] };
  const cells = await db<CohortCell[]>`
    with c as (${cohort}),
    hits as (
      select distinct e.recipient, floor(extract(epoch from (e.occurred_at - ${start}::timestamptz)) / 604800)::int as week
      from events e
      where e.tenant_id = ${tenantId} and e.type = ${METRIC_EVENT[metric]} and e.occurred_at >= ${start} and e.occurred_at <= ${until} and ${filter}
    )
    select c.cohort, h.week - c.cohort as offset, count(distinct c.id)::int as contacts
    from c join hits h on h.recipient = c.email and h.week >= c.cohort
    group by 1, 2`;
  return { sizes, cells };
}

export interface EspSuppressionRow {
  id: string;
  provider: string;
  reason: 'blocked' | 'deferral_storm';
  refusals: number;
  window_minutes: number;
  sample_reply: string | null;
  triggered_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

/** Active suppressions (not revoked, expiring after `now`) and those triggered since `recentSince`, newest first. */
export async function listEspSuppressions(db: Queryable, tenantId: string, now: Date, recentSince: Date): Promise<EspSuppressionRow[]> {
  return db<EspSuppressionRow[]>`
    select id, provider, reason, refusals, window_minutes, sample_reply, triggered_at, expires_at, revoked_at
    from esp_suppressions
    where tenant_id = ${tenantId} and ((revoked_at is null and expires_at > ${now}) or triggered_at >= ${recentSince})
    order by triggered_at desc, id desc`;
}

/** Every tenant's suppressions in force at `now` (not revoked, not expired): a handful, read whole by the send path's cache. */
export async function activeEspSuppressions(db: Queryable, now: Date): Promise<{ tenant_id: string; provider: string; expires_at: Date }[]> {
  return db<{ tenant_id: string; provider: string; expires_at: Date }[]>`
    select tenant_id, provider, max(expires_at) as expires_at from esp_suppressions
    where revoked_at is null and expires_at > ${now}
    group by tenant_id, provider`;
}

/** Adds one refusal to its window's counter; returns the window's counts after it. */
export async function countRefusal(
  db: Queryable,
  r: { tenantId: string; provider: string; windowStart: Date; kind: 'block' | 'deferral' },
): Promise<{ blocks: number; deferrals: number }> {
  const block = r.kind === 'block' ? 1 : 0;
  const [row] = await db<{ blocks: number; deferrals: number }[]>`
    insert into esp_refusal_windows (tenant_id, provider, window_start, blocks, deferrals)
    values (${r.tenantId}, ${r.provider}, ${r.windowStart}, ${block}, ${1 - block})
    on conflict (tenant_id, provider, window_start) do update set
      blocks = esp_refusal_windows.blocks + excluded.blocks, deferrals = esp_refusal_windows.deferrals + excluded.deferrals
    returning blocks, deferrals`;
  return row!;
}

/** Raises a suppression unless one of the provider is still open (not revoked, not expired); true when raised. */
export async function raiseEspSuppression(
  db: Queryable,
  s: {
    tenantId: string;
    provider: string;
    reason: 'blocked' | 'deferral_storm';
    refusals: number;
    windowMinutes: number;
    sampleReply: string | null;
    at: Date;
    expiresAt: Date;
  },
): Promise<boolean> {
  const rows = await db`
    insert into esp_suppressions (tenant_id, provider, reason, refusals, window_minutes, sample_reply, triggered_at, expires_at)
    select ${s.tenantId}, ${s.provider}, ${s.reason}, ${s.refusals}, ${s.windowMinutes}, ${s.sampleReply}, ${s.at}, ${s.expiresAt}
    where not exists (
      select 1 from esp_suppressions where tenant_id = ${s.tenantId} and provider = ${s.provider} and revoked_at is null and expires_at > ${s.at})
    returning id`;
  return rows.length > 0;
}

/** Deletes refusal counters of windows that started before `before`. */
export async function pruneRefusalWindows(db: Queryable, before: Date): Promise<number> {
  return (await db`delete from esp_refusal_windows where window_start < ${before}`).count;
}
