-- Counters the send gates consume atomically: each domain's warm-up tier, the per-(tenant, domain) daily warm-up counter, the tenant's monthly quota usage.

create table domain_warmup (
  domain_id uuid primary key references domains(id) on delete cascade,
  tenant_id uuid not null references tenants(id) on delete cascade,
  tier integer not null default 0 check (tier >= 0),
  tier_changed_at timestamptz not null,
  last_send_at timestamptz
);

create table warmup_daily_counters (
  tenant_id uuid not null references tenants(id) on delete cascade,
  domain_id uuid not null references domains(id) on delete cascade,
  -- The UTC day counted.
  day date not null,
  sent integer not null check (sent >= 0),
  primary key (tenant_id, domain_id, day)
);

create table tenant_monthly_usage (
  tenant_id uuid not null references tenants(id) on delete cascade,
  -- First day of the UTC month counted.
  month date not null,
  sent integer not null check (sent >= 0),
  primary key (tenant_id, month)
);
