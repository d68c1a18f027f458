-- Warm-up operations (issue 17): the daily auto-ramp and its record of moves, super-admin overrides
-- (advance, hold, demote, pause, resume), per-(tenant, mailbox provider) sub-caps, and the 30-day
-- warm-up schedule.

-- paused_at: the domain sends nothing (the warm-up gate defers its sends) until a super-admin
-- resumes it. held_until: a super-admin froze the tier; the ramp moves it neither up nor down before then.
alter table domain_warmup
  add column paused_at timestamptz,
  add column paused_reason text,
  add column held_until timestamptz;

-- Every tier decision: the ramp's daily verdict per domain (a hold included, with the rates it
-- used) and each override. The unique index on (tenant, domain, judged day) of the ramp's rows is
-- what makes a same-day re-run a no-op.
create table warmup_moves (
  id bigserial primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  domain_id uuid not null references domains(id) on delete cascade,
  source text not null check (source in ('auto', 'override')),
  -- auto: the UTC day whose outcomes were judged (the day before the run).
  rates_day date,
  action text not null check (action in ('promote', 'hold', 'demote', 'pause', 'resume', 'reset', 'advance', 'freeze')),
  from_tier integer not null,
  to_tier integer not null,
  reason text not null,
  rates jsonb,
  -- override: the super-admin user.
  actor_id uuid,
  created_at timestamptz not null,
  constraint warmup_moves_auto_day check (source <> 'auto' or rates_day is not null)
);
create unique index warmup_moves_auto_once on warmup_moves (tenant_id, domain_id, rates_day) where source = 'auto';
create index warmup_moves_domain_idx on warmup_moves (domain_id, created_at desc, id desc);

-- Per-(tenant, mailbox provider) daily sub-caps inside the tier cap, seeded from config/warmup.yaml.
create table warmup_esp_caps (
  tenant_id uuid not null references tenants(id) on delete cascade,
  provider text not null check (provider in ('gmail', 'outlook', 'yahoo', 'aol', 'icloud', 'proton', 'fastmail', 'other')),
  daily_limit integer not null check (daily_limit >= 0),
  primary key (tenant_id, provider)
);

-- Sends counted against a sub-cap, per (tenant, provider, UTC day).
create table warmup_esp_daily (
  tenant_id uuid not null references tenants(id) on delete cascade,
  provider text not null,
  day date not null,
  sent integer not null check (sent >= 0),
  primary key (tenant_id, provider, day)
);

-- Sends that went over a sub-cap, per sending domain: deferred when enforcement is on, only
-- counted (would have been throttled) when it is off.
create table warmup_esp_throttles (
  tenant_id uuid not null references tenants(id) on delete cascade,
  domain_id uuid not null references domains(id) on delete cascade,
  provider text not null,
  day date not null,
  over_cap integer not null check (over_cap >= 0),
  enforced integer not null default 0 check (enforced >= 0),
  primary key (tenant_id, domain_id, provider, day)
);

-- The warm-up schedule: one plan per tenant and its 30 daily rows.
create table warmup_schedule_plans (
  tenant_id uuid primary key references tenants(id) on delete cascade,
  strategy text not null,
  -- Which of the spec's two field sets the plan came from: formal (strategy) or narrative (ramp_strategy).
  field_set text not null check (field_set in ('formal', 'narrative')),
  total_target_recipients integer not null check (total_target_recipients between 0 and 10000000),
  start_date date not null,
  domain_id uuid references domains(id) on delete set null,
  generated_at timestamptz not null
);

create table warmup_schedule_rows (
  tenant_id uuid not null references warmup_schedule_plans(tenant_id) on delete cascade,
  day_offset integer not null check (day_offset between 0 and 29),
  daily_target_recipients integer not null check (daily_target_recipients >= 0),
  template_slug text,
  notes text,
  send_status text not null default 'pending' check (send_status in ('pending', 'dispatching', 'sent', 'skipped', 'failed')),
  dispatched_at timestamptz,
  -- What the dispatch did: recipients chosen, accepted, deferred, refused.
  dispatch_result jsonb,
  updated_at timestamptz not null,
  primary key (tenant_id, day_offset)
);
