-- Analytics: hourly rollups of the event feed (per tenant, and per tenant and recipient domain) that /analytics/rollup
-- and /analytics/esp-scores read instead of the raw events, the set of hours whose rollup is stale, and the automatic
-- per-provider (ESP) suppressions the delivery path raises with the refusal counters that trigger them.
--
-- How the rollups stay right: inserting (or updating) events marks their (tenant, hour) stale in the very statement
-- (one statement-level trigger per insert batch, so a group commit of hundreds of events pays one small upsert);
-- the analytics-rollup worker, every 5 minutes, claims stale hours and recomputes them whole from the events. A late
-- event (a bounce report for last week's send, a scanner flag set afterwards) marks its own hour, so no look-back
-- window is guessed.

-- Per tenant and UTC hour: the spec's five counters. opened / clicked leave machine opens and scanner clicks out;
-- *_all keep them, for callers that ask for every hit.
create table analytics_hourly (
  tenant_id uuid not null references tenants(id) on delete cascade,
  hour timestamptz not null,
  sent bigint not null default 0,
  delivered bigint not null default 0,
  bounced bigint not null default 0,
  opened bigint not null default 0,
  clicked bigint not null default 0,
  complained bigint not null default 0,
  opened_all bigint not null default 0,
  clicked_all bigint not null default 0,
  primary key (tenant_id, hour)
);

-- Per tenant, UTC hour and recipient domain: what the ESP scores need (the provider of a custom domain comes from its
-- MX hosts, looked up at read time and cached, so the domain is kept, not the provider). engaged: distinct sends
-- with a human open or click in that hour.
create table analytics_domain_hourly (
  tenant_id uuid not null references tenants(id) on delete cascade,
  hour timestamptz not null,
  domain text not null,
  sent bigint not null default 0,
  delivered bigint not null default 0,
  bounced bigint not null default 0,
  complained bigint not null default 0,
  engaged bigint not null default 0,
  primary key (tenant_id, hour, domain)
);

-- The (tenant, hour) rollups to recompute. marked_at is rewritten on each mark so a mark takes the row's lock: the
-- worker's claim (delete … for update skip locked) and a writer's mark never cross unseen.
create table analytics_stale_hours (
  tenant_id uuid not null references tenants(id) on delete cascade,
  hour timestamptz not null,
  marked_at timestamptz not null default now(),
  primary key (tenant_id, hour)
);

create function events_mark_rollup_stale() returns trigger language plpgsql as $$
begin
  insert into analytics_stale_hours (tenant_id, hour)
  select distinct tenant_id, date_trunc('hour', occurred_at, 'UTC') from new_events
  order by 1, 2
  on conflict (tenant_id, hour) do update set marked_at = excluded.marked_at;
  return null;
end $$;

create trigger events_mark_rollup_stale_insert after insert on events
  referencing new table as new_events
  for each statement execute function events_mark_rollup_stale();

-- Updates are rare (the scanner flag of a click burst, an erasure): they re-mark the hours they touch.
create trigger events_mark_rollup_stale_update after update on events
  referencing new table as new_events
  for each statement execute function events_mark_rollup_stale();

-- The cohort query reads a tenant's opens or clicks of up to 12 weeks, joined to contacts by address:
-- events_engagement_window_idx (tenant_id, type, occurred_at) include (recipient) already serves it; its sends come
-- from events_tenant_idx (tenant_id, occurred_at). No index is added: every one costs each event write, and the
-- cohort answer is cached for an hour.

-- Every hour that already has events: computed by the first run of the worker.
insert into analytics_stale_hours (tenant_id, hour)
select distinct tenant_id, date_trunc('hour', occurred_at, 'UTC') from events
on conflict do nothing;

-- Automatic suppressions per mailbox provider: a provider that blocks a tenant's mail, or defers it in a storm,
-- gets a cool-down (README: analytics). active = not revoked and expires_at in the future.
create table esp_suppressions (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  provider text not null check (provider in ('gmail', 'outlook', 'yahoo', 'aol', 'icloud', 'proton', 'fastmail', 'other')),
  reason text not null check (reason in ('blocked', 'deferral_storm')),
  -- How many refusals of the kind, in the window that triggered it, and a sample reply.
  refusals integer not null,
  window_minutes integer not null,
  sample_reply text,
  triggered_at timestamptz not null,
  expires_at timestamptz not null,
  revoked_at timestamptz
);

create index esp_suppressions_tenant_idx on esp_suppressions (tenant_id, triggered_at desc);
-- One unrevoked suppression per tenant and provider is checked with this index before a new one is raised.
create index esp_suppressions_open_idx on esp_suppressions (tenant_id, provider, expires_at desc) where revoked_at is null;

-- Refusals per tenant, provider and fixed window, counted by the delivery path in the transaction that records
-- each refusal; rows older than a day are pruned by the rollup worker.
create table esp_refusal_windows (
  tenant_id uuid not null references tenants(id) on delete cascade,
  provider text not null,
  window_start timestamptz not null,
  blocks integer not null default 0,
  deferrals integer not null default 0,
  primary key (tenant_id, provider, window_start)
);
create index esp_refusal_windows_start_idx on esp_refusal_windows (window_start);
