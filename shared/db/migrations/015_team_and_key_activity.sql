-- Team invites (single-use, expiring, token stored hashed) and API key activity aggregated per minute.

create table team_invites (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  email text not null,
  role text not null check (role in ('owner', 'admin', 'developer', 'viewer')),
  -- SHA-256 of the token; the token itself is shown once to the inviter (and e-mailed).
  token_hash text not null,
  invited_by uuid references users(id) on delete set null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  accepted_at timestamptz,
  accepted_user_id uuid references users(id) on delete set null,
  revoked_at timestamptz,
  constraint team_invites_token_key unique (token_hash)
);

create index team_invites_tenant_idx on team_invites (tenant_id, created_at desc);

-- One row per (key, UTC minute, route, status): request counts never cost a row per request.
-- latency_buckets holds counts per bucket of shared/keys/activity-histogram.ts (same order).
create table api_key_activity (
  key_id uuid not null references api_keys(id) on delete cascade,
  minute timestamptz not null,
  route text not null,
  status smallint not null,
  count integer not null,
  latency_ms_sum bigint not null,
  latency_buckets integer[] not null,
  primary key (key_id, minute, route, status)
);

-- For the pruning worker.
create index api_key_activity_minute_idx on api_key_activity (minute);

-- Client addresses per key per UTC day: enough to tell a new address from a known one.
create table api_key_client_days (
  key_id uuid not null references api_keys(id) on delete cascade,
  day date not null,
  client_ip text not null,
  count integer not null,
  last_seen_at timestamptz not null,
  primary key (key_id, day, client_ip)
);

create index api_key_client_days_day_idx on api_key_client_days (day);
