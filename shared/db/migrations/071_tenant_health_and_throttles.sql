-- Super-admin platform views: the API's refusals per tenant (GET /admin/ratelimits), the daily tenant health checks
-- (GET /admin/tenants/{id}/health-checks) and when each tenant's morning digest was last posted to the chat.

-- 429s per tenant and minute, written in batches by every process's rate limiter (shared/ratelimit/throttles.ts).
-- Unlogged like rate_limit_counters: a crash losing the last minutes of a 5-minute view costs nothing.
create unlogged table rate_limit_throttles (
  tenant_id uuid not null references tenants(id) on delete cascade,
  minute_start timestamptz not null,
  count integer not null,
  last_at timestamptz not null,
  primary key (tenant_id, minute_start)
);
create index rate_limit_throttles_minute_idx on rate_limit_throttles (minute_start);

-- One row per health-check run of a tenant: the verdict and every check's result.
create table tenant_health_checks (
  id bigserial primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  ran_at timestamptz not null,
  trigger text not null check (trigger in ('schedule', 'run_now')),
  verdict text not null check (verdict in ('pass', 'warn', 'fail')),
  checks jsonb not null
);
create index tenant_health_checks_tenant_idx on tenant_health_checks (tenant_id, ran_at desc, id desc);

-- The 09:00 IST digest posts at most once a day per tenant.
alter table tenants add column digest_last_posted_at timestamptz;
