-- Foundation: plans, tenants, users, API keys, rate-limit counters and overrides, the audit hash chain.

create table plans (
  id text primary key,
  name text not null,
  monthly_send_cap integer not null check (monthly_send_cap >= 0),
  created_at timestamptz not null default now()
);

insert into plans (id, name, monthly_send_cap) values
  ('free', 'Free', 3000),
  ('starter', 'Starter', 50000),
  ('pro', 'Pro', 250000),
  ('scale', 'Scale', 2000000),
  ('platform', 'Platform (super-admin)', 2147483647);

create table tenants (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  slug text not null,
  plan_id text not null references plans(id) default 'free',
  is_sandbox boolean not null default false,
  is_super_admin boolean not null default false,
  status text not null default 'active' check (status in ('active', 'suspended')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  constraint tenants_slug_key unique (slug)
);

-- At most one super-admin tenant.
create unique index tenants_one_super_admin on tenants (is_super_admin) where is_super_admin;

create table users (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  email text not null,
  password_hash text not null,
  first_name text,
  role text not null default 'owner' check (role in ('owner', 'admin', 'developer', 'viewer')),
  is_super_admin boolean not null default false,
  -- JWTs issued before this instant are refused (password change, forced sign-out).
  sessions_valid_after timestamptz not null default to_timestamp(0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);

create unique index users_email_key on users (lower(email));
create index users_tenant_idx on users (tenant_id);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  prefix text not null,
  mode text not null check (mode in ('live', 'test')),
  key_hash text not null,
  scopes text[] not null default '{}',
  created_by_user_id uuid references users(id) on delete set null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  last_used_ip text,
  revoked_at timestamptz,
  constraint api_keys_key_hash_key unique (key_hash)
);

create index api_keys_tenant_idx on api_keys (tenant_id, created_at desc);

-- Fixed-window request counters shared by every process. Unlogged: losing them in a
-- crash only forgives a window's requests, and it spares a WAL flush per sync.
create unlogged table rate_limit_counters (
  bucket text not null,
  window_start timestamptz not null,
  window_seconds integer not null,
  count integer not null default 0,
  primary key (bucket, window_start)
);

create index rate_limit_counters_expiry_idx on rate_limit_counters (window_start);

create table tenant_rate_limits (
  tenant_id uuid primary key references tenants(id) on delete cascade,
  api_requests_per_sec integer check (api_requests_per_sec > 0),
  api_requests_per_day integer check (api_requests_per_day > 0),
  notes text,
  updated_at timestamptz not null default now()
);

-- Append-only audit log; each row's hash covers its content and the previous row's hash.
create table audit_events (
  id bigserial primary key,
  tenant_id uuid,
  actor_type text not null check (actor_type in ('user', 'api_key', 'system')),
  actor_id text,
  action text not null,
  resource_type text,
  resource_id text,
  metadata jsonb not null default '{}',
  ip text,
  created_at timestamptz not null,
  prev_hash text not null,
  hash text not null
);

create index audit_events_tenant_idx on audit_events (tenant_id, id desc);
create index audit_events_action_idx on audit_events (action, id desc);

-- Last tick of each scheduled worker, for /admin/workers.
create table worker_ticks (
  name text primary key,
  last_tick_at timestamptz not null,
  last_tick_outcome text not null,
  last_tick_duration_ms integer not null,
  last_error text
);
