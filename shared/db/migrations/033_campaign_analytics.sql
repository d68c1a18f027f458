-- Campaign analytics: the delivery-side counters of campaign_stats (sent, delivered, deferred, failed, bounces,
-- complaints), engagement per hour, clicks per URL and unique engagement per contact country, all kept as events
-- are written so GET /campaigns/{id}/stats and the heat map read a handful of rows, never a million.
--
-- Split of the work: the tracking recorder (shared/tracking/recorder.ts) counts *people* (first opens and clicks,
-- human or not, per variant and per country), because only it knows whether a hit is a recipient's first. The
-- triggers below count *events*: the writers of delivery events (the MTA's delivery and bounce code) know nothing
-- about campaigns, so the counts are added by the database in the very transaction that inserts the events.

-- Engagement per campaign and hour (UTC), for hourly_trend.
create table campaign_hourly_stats (
  campaign_id uuid not null references campaigns(id) on delete cascade,
  hour timestamptz not null,
  delivered bigint not null default 0,
  opens bigint not null default 0,
  clicks bigint not null default 0,
  unsubscribes bigint not null default 0,
  bounces bigint not null default 0,
  complaints bigint not null default 0,
  primary key (campaign_id, hour)
);

-- Clicks per destination URL, for the click heat map (keyed by the URL's MD5: a URL may be longer than an index entry).
create table campaign_link_stats (
  campaign_id uuid not null references campaigns(id) on delete cascade,
  url_hash bytea not null,
  url text not null,
  clicks bigint not null default 0,
  primary key (campaign_id, url_hash)
);
create index campaign_link_stats_clicks_idx on campaign_link_stats (campaign_id, clicks desc);

-- Unique opens and clicks per contact country ('' when the contact has none), maintained by the tracking recorder.
create table campaign_country_stats (
  campaign_id uuid not null references campaigns(id) on delete cascade,
  country text not null,
  unique_opens bigint not null default 0,
  unique_human_opens bigint not null default 0,
  unique_clicks bigint not null default 0,
  unique_human_clicks bigint not null default 0,
  primary key (campaign_id, country)
);

-- Delivery events of a campaign send are written without the campaign (the MTA does not know it): named here from
-- the send, so the campaign's event feed (events_campaign_idx) holds them too. Engagement events and the send's own
-- acceptance event already carry it; only those types pay the look-up.
create function events_campaign_of_send() returns trigger language plpgsql as $$
begin
  select s.campaign_id, s.contact_id into new.campaign_id, new.contact_id from sends s where s.id = new.send_id;
  return new;
end $$;

-- The WHEN clause is checked without calling the function: rows that already name their campaign, or have no send,
-- cost nothing here.
create trigger events_campaign_of_send before insert on events
  for each row
  when (new.campaign_id is null and new.send_id is not null and new.type in ('delivered', 'deferred', 'bounce', 'dropped', 'complaint'))
  execute function events_campaign_of_send();

-- Once per INSERT statement (group commits insert hundreds of events at once): the statement's campaign events,
-- counted per campaign and variant, hour and URL, added in key order (concurrent writers lock rows in one order).
--   sent: an accepted send ('send' event) that was not dropped by a gate;  delivered: the receiving server took it;
--   deferred: each temporary failure (a retry is counted again);  failed: bounced (hard or soft) or dropped when its
--   delivery came due;  complaints: feedback-loop reports.
create function events_count_campaigns() returns trigger language plpgsql as $$
begin
  -- Most statements (transactional mail) hold no campaign event: nothing more to do.
  if not exists (select 1 from new_events where campaign_id is not null) then
    return null;
  end if;

  insert into campaign_stats (campaign_id, variant, sent, delivered, deferred, failed, hard_bounces, soft_bounces, complaints)
  select g.* from (
    select s.campaign_id, coalesce(s.campaign_variant, '') as variant,
      count(*) filter (where e.type = 'send' and coalesce(e.detail ->> 'status', '') <> 'dropped') as sent,
      count(*) filter (where e.type = 'delivered') as delivered,
      count(*) filter (where e.type = 'deferred') as deferred,
      count(*) filter (where e.type = 'bounce' or e.type = 'dropped') as failed,
      count(*) filter (where e.type = 'bounce' and e.subtype = 'hard') as hard_bounces,
      count(*) filter (where e.type = 'bounce' and e.subtype = 'soft') as soft_bounces,
      count(*) filter (where e.type = 'complaint') as complaints
    from new_events e join sends s on s.id = e.send_id
    where e.campaign_id is not null and e.type in ('send', 'delivered', 'deferred', 'bounce', 'dropped', 'complaint')
    group by 1, 2
  ) g
  -- Checked per group, not per row: a campaign deleted meanwhile has no counters to keep.
  where exists (select 1 from campaigns c where c.id = g.campaign_id)
  order by 1, 2
  on conflict (campaign_id, variant) do update set
    sent = campaign_stats.sent + excluded.sent,
    delivered = campaign_stats.delivered + excluded.delivered,
    deferred = campaign_stats.deferred + excluded.deferred,
    failed = campaign_stats.failed + excluded.failed,
    hard_bounces = campaign_stats.hard_bounces + excluded.hard_bounces,
    soft_bounces = campaign_stats.soft_bounces + excluded.soft_bounces,
    complaints = campaign_stats.complaints + excluded.complaints;

  insert into campaign_hourly_stats (campaign_id, hour, delivered, opens, clicks, unsubscribes, bounces, complaints)
  select g.* from (
    select e.campaign_id, date_trunc('hour', e.occurred_at, 'UTC') as hour,
      count(*) filter (where e.type = 'delivered') as delivered,
      count(*) filter (where e.type = 'open') as opens,
      count(*) filter (where e.type = 'click') as clicks,
      count(*) filter (where e.type = 'unsubscribe') as unsubscribes,
      count(*) filter (where e.type = 'bounce') as bounces,
      count(*) filter (where e.type = 'complaint') as complaints
    from new_events e
    where e.campaign_id is not null and e.type in ('delivered', 'open', 'click', 'unsubscribe', 'bounce', 'complaint')
    group by 1, 2
  ) g
  where exists (select 1 from campaigns c where c.id = g.campaign_id)
  order by 1, 2
  on conflict (campaign_id, hour) do update set
    delivered = campaign_hourly_stats.delivered + excluded.delivered,
    opens = campaign_hourly_stats.opens + excluded.opens,
    clicks = campaign_hourly_stats.clicks + excluded.clicks,
    unsubscribes = campaign_hourly_stats.unsubscribes + excluded.unsubscribes,
    bounces = campaign_hourly_stats.bounces + excluded.bounces,
    complaints = campaign_hourly_stats.complaints + excluded.complaints;

  insert into campaign_link_stats (campaign_id, url_hash, url, clicks)
  select g.* from (
    select e.campaign_id, decode(md5(e.detail ->> 'url'), 'hex') as url_hash, min(e.detail ->> 'url') as url, count(*) as clicks
    from new_events e
    where e.campaign_id is not null and e.type = 'click' and coalesce(e.detail ->> 'url', '') <> ''
    group by 1, 2
  ) g
  where exists (select 1 from campaigns c where c.id = g.campaign_id)
  order by 1, 2
  on conflict (campaign_id, url_hash) do update set clicks = campaign_link_stats.clicks + excluded.clicks;
  return null;
end $$;

create trigger events_count_campaigns after insert on events
  referencing new table as new_events
  for each statement execute function events_count_campaigns();

-- Events written before this migration: counted once, now.
with counted as (
  select s.campaign_id, coalesce(s.campaign_variant, '') as variant,
    count(*) filter (where e.type = 'send' and coalesce(e.detail ->> 'status', '') <> 'dropped') as sent,
    count(*) filter (where e.type = 'delivered') as delivered,
    count(*) filter (where e.type = 'deferred') as deferred,
    count(*) filter (where e.type = 'bounce' or e.type = 'dropped') as failed,
    count(*) filter (where e.type = 'bounce' and e.subtype = 'hard') as hard_bounces,
    count(*) filter (where e.type = 'bounce' and e.subtype = 'soft') as soft_bounces,
    count(*) filter (where e.type = 'complaint') as complaints
  from events e join sends s on s.id = e.send_id join campaigns c on c.id = s.campaign_id
  where e.type in ('send', 'delivered', 'deferred', 'bounce', 'dropped', 'complaint')
  group by 1, 2
)
insert into campaign_stats (campaign_id, variant, sent, delivered, deferred, failed, hard_bounces, soft_bounces, complaints)
select * from counted
on conflict (campaign_id, variant) do update set
  sent = excluded.sent, delivered = excluded.delivered, deferred = excluded.deferred, failed = excluded.failed,
  hard_bounces = excluded.hard_bounces, soft_bounces = excluded.soft_bounces, complaints = excluded.complaints;

update events e set campaign_id = s.campaign_id, contact_id = s.contact_id
from sends s
where s.id = e.send_id and e.campaign_id is null and s.campaign_id is not null;

insert into campaign_hourly_stats (campaign_id, hour, delivered, opens, clicks, unsubscribes, bounces, complaints)
select e.campaign_id, date_trunc('hour', e.occurred_at, 'UTC'),
  count(*) filter (where e.type = 'delivered'), count(*) filter (where e.type = 'open'), count(*) filter (where e.type = 'click'),
  count(*) filter (where e.type = 'unsubscribe'), count(*) filter (where e.type = 'bounce'), count(*) filter (where e.type = 'complaint')
from events e join campaigns c on c.id = e.campaign_id
where e.type in ('delivered', 'open', 'click', 'unsubscribe', 'bounce', 'complaint')
group by 1, 2;

insert into campaign_link_stats (campaign_id, url_hash, url, clicks)
select e.campaign_id, decode(md5(e.detail ->> 'url'), 'hex'), min(e.detail ->> 'url'), count(*)
from events e join campaigns c on c.id = e.campaign_id
where e.type = 'click' and coalesce(e.detail ->> 'url', '') <> ''
group by 1, 2;

insert into campaign_country_stats (campaign_id, country, unique_opens, unique_human_opens, unique_clicks, unique_human_clicks)
select r.campaign_id, coalesce(p.country, ''), count(r.first_open_at), count(r.first_human_open_at), count(r.first_click_at), count(r.first_human_click_at)
from campaign_recipients r left join contacts p on p.id = r.contact_id and p.tenant_id = r.tenant_id
where r.first_open_at is not null or r.first_click_at is not null
group by 1, 2;
