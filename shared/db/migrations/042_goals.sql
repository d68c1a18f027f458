-- Goals and their conversions: a tenant's URL match rules with revenue, and one row per click that matched one.
-- A conversion is written with its click (same transaction) and keeps the goal's name and the revenue it was worth
-- then: editing a goal never rewrites history, and deleting one leaves its conversions with goal_id null.

create table goals (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  match_type text not null check (match_type in ('exact', 'prefix', 'regex')),
  match_value text not null,
  -- Fixed revenue per conversion; with revenue_param, the fallback when the URL lacks a usable value.
  revenue_cents bigint check (revenue_cents >= 0),
  -- A query parameter of the clicked URL holding the amount in major units (49.99 -> 4999 cents).
  revenue_param text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create unique index goals_tenant_name_key on goals (tenant_id, lower(name));
create index goals_tenant_idx on goals (tenant_id, created_at desc, id desc);

create table goal_conversions (
  id bigserial primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  -- The click; the conversion goes with it (a send deleted with its tenant or contact erasure's cascade).
  event_id uuid not null references events(id) on delete cascade,
  goal_id uuid references goals(id) on delete set null,
  goal_name text not null,
  campaign_id uuid,
  contact_id uuid,
  send_id uuid not null,
  revenue_cents bigint not null check (revenue_cents >= 0),
  occurred_at timestamptz not null,
  constraint goal_conversions_event_goal_key unique (event_id, goal_id)
);

create index goal_conversions_campaign_idx on goal_conversions (campaign_id) where campaign_id is not null;
create index goal_conversions_goal_idx on goal_conversions (goal_id) where goal_id is not null;
