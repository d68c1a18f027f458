-- Campaigns: the campaign and its lifecycle, its recipients materialized at send time (the unit of exactly-once
-- fan-out), counters kept per campaign and A/B variant, and the send/event columns that tie mail back to a campaign.

create table campaigns (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  -- draft → scheduled → sending ⇄ paused → sent; cancelled and failed are terminal too (README: campaign lifecycle).
  status text not null default 'draft' check (status in ('draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled', 'failed')),
  subject text,
  subject_b text,
  preheader_text text,
  body_html text,
  body_text text,
  from_email text,
  from_name text,
  reply_to text,
  list_id uuid references lists(id) on delete set null,
  segment_id uuid references segments(id) on delete set null,
  template_id uuid references templates(id) on delete set null,
  md5_list_id uuid references md5_lists(id) on delete set null,
  -- A/B: the share of the target (1..50 % per variant, so 2..100 % in all) that tests subject vs subject_b.
  ab_split_pct smallint check (ab_split_pct between 1 and 100),
  ab_metric text not null default 'open' check (ab_metric in ('open', 'click')),
  ab_winner text check (ab_winner in ('a', 'b')),
  ab_winner_declared_at timestamptz,
  send_time_optimization boolean not null default false,
  utm_tagging boolean not null default false,
  utm_source text,
  utm_medium text,
  utm_campaign text,
  track_opens boolean not null default true,
  track_clicks boolean not null default true,
  scheduled_at timestamptz,
  -- Fan-out state: when sending began and ended, why it waits (e.g. the warm-up cap) and until when.
  started_at timestamptz,
  finished_at timestamptz,
  paused_at timestamptz,
  cancelled_at timestamptz,
  waiting_reason text,
  waiting_until timestamptz,
  failure_reason text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint campaigns_one_target check (list_id is null or segment_id is null)
);

create index campaigns_tenant_idx on campaigns (tenant_id, created_at desc, id desc);
create index campaigns_scheduled_idx on campaigns (scheduled_at) where status = 'scheduled';

-- Everyone a send targets, fixed when the send starts (the segment evaluated then). One row per contact: the
-- fan-out claims pending rows, and a row's status, send_id and skip reason commit with its send, so a recipient
-- is sent exactly once whatever crashes.
create table campaign_recipients (
  campaign_id uuid not null references campaigns(id) on delete cascade,
  contact_id uuid not null,
  tenant_id uuid not null references tenants(id) on delete cascade,
  email text not null,
  -- a / b for the test portion of an A/B campaign; null for the rest (which gets the winner, or the one subject).
  variant text check (variant in ('a', 'b')),
  -- pending: not handled yet; held: the remainder of an A/B test waiting for its winner; queued: a send exists
  -- (send_id); skipped: not sent (skip_reason).
  status text not null default 'pending' check (status in ('pending', 'held', 'queued', 'skipped')),
  skip_reason text check (skip_reason in ('unsubscribed', 'deleted', 'suppressed', 'md5_listed', 'invalid', 'cancelled')),
  -- Assigned when the row is made, so a send retried after a crash keeps its id (and its tracking tokens).
  send_id uuid not null,
  -- First open and click (human or machine), for unique counts.
  first_open_at timestamptz,
  first_human_open_at timestamptz,
  first_click_at timestamptz,
  first_human_click_at timestamptz,
  primary key (campaign_id, contact_id)
);

create index campaign_recipients_pending_idx on campaign_recipients (campaign_id, contact_id) where status = 'pending';
create unique index campaign_recipients_send_idx on campaign_recipients (send_id);

-- Counters per campaign and variant ('' without an A/B test or for the remainder), maintained as things happen
-- so stats never recount a million rows.
create table campaign_stats (
  campaign_id uuid not null references campaigns(id) on delete cascade,
  variant text not null default '',
  targeted bigint not null default 0,
  skipped_unsubscribed bigint not null default 0,
  skipped_deleted bigint not null default 0,
  skipped_suppressed bigint not null default 0,
  skipped_md5 bigint not null default 0,
  skipped_invalid bigint not null default 0,
  queued bigint not null default 0,
  sent bigint not null default 0,
  delivered bigint not null default 0,
  deferred bigint not null default 0,
  failed bigint not null default 0,
  hard_bounces bigint not null default 0,
  soft_bounces bigint not null default 0,
  complaints bigint not null default 0,
  unsubscribes bigint not null default 0,
  total_opens bigint not null default 0,
  unique_opens bigint not null default 0,
  unique_human_opens bigint not null default 0,
  total_clicks bigint not null default 0,
  unique_clicks bigint not null default 0,
  unique_human_clicks bigint not null default 0,
  primary key (campaign_id, variant)
);

alter table sends add column campaign_id uuid references campaigns(id) on delete set null;
alter table sends add column campaign_variant text;
-- The contact a campaign send went to (campaign sends only), so its delivery and engagement events can name it.
alter table sends add column contact_id uuid;
create index sends_campaign_idx on sends (campaign_id) where campaign_id is not null;

alter table events add column campaign_id uuid;
alter table events add column contact_id uuid;
create index events_campaign_idx on events (campaign_id, occurred_at desc) where campaign_id is not null;
