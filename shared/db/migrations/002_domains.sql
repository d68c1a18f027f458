-- Sending domains, the DNS records they must publish and their last check, DKIM keys (private halves sealed) and DKIM rotations.

create table domains (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  -- A-label form, lower case: one tenant at a time owns a name.
  name text not null,
  unicode_name text not null,
  -- Set while SPF, DKIM and DMARC all verify: the domain may send.
  verified_at timestamptz,
  -- Last time a domain that could send stopped verifying (a record disappeared or changed).
  drifted_at timestamptz,
  last_checked_at timestamptz,
  created_at timestamptz not null,
  constraint domains_name_key unique (name)
);

create index domains_tenant_idx on domains (tenant_id, created_at desc, id desc);

create table domain_records (
  domain_id uuid not null references domains(id) on delete cascade,
  kind text not null check (kind in ('spf', 'dkim', 'dmarc', 'mx')),
  type text not null check (type in ('TXT', 'MX')),
  host text not null,
  expected text not null,
  priority integer,
  verified boolean not null default false,
  -- What DNS held at the last check, and why it did not verify.
  found text,
  error text,
  verified_at timestamptz,
  drifted_at timestamptz,
  last_checked_at timestamptz,
  primary key (domain_id, kind)
);

create table dkim_keys (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  domain_id uuid not null references domains(id) on delete cascade,
  selector text not null,
  key_bits integer not null,
  -- Base64 SubjectPublicKeyInfo (the p= tag).
  public_key text not null,
  -- PKCS#8 PEM sealed with AES-256-GCM under the master key (shared/secrets/sealed-box.ts).
  private_key_sealed bytea not null,
  state text not null check (state in ('pending', 'active', 'retiring', 'retired')),
  created_at timestamptz not null,
  activated_at timestamptz,
  retiring_at timestamptz,
  retired_at timestamptz,
  constraint dkim_keys_selector_key unique (domain_id, selector)
);

-- One live signer per domain.
create unique index dkim_keys_one_active on dkim_keys (domain_id) where state = 'active';

create table dkim_rotations (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  domain_id uuid not null references domains(id) on delete cascade,
  old_key_id uuid references dkim_keys(id) on delete set null,
  new_key_id uuid not null references dkim_keys(id) on delete cascade,
  state text not null check (state in ('pending', 'publishing', 'active', 'retiring', 'retired')),
  reason text,
  initiated_by text not null check (initiated_by in ('tenant', 'admin', 'auto')),
  dns_provider_managed boolean not null default false,
  dns_published_at timestamptz,
  error text,
  -- Last propagation check, one entry per public resolver.
  resolver_results jsonb not null default '[]',
  last_checked_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  activated_at timestamptz,
  -- When an activated rotation's old key stops being published (end of its grace period).
  retire_after timestamptz,
  retired_at timestamptz,
  rolled_back_at timestamptz
);

-- At most one rotation in flight per domain (rotate again while one is → 409).
create unique index dkim_rotations_one_in_flight on dkim_rotations (domain_id) where state <> 'retired';
create index dkim_rotations_in_flight_idx on dkim_rotations (created_at, id) where state <> 'retired';
create index dkim_rotations_tenant_idx on dkim_rotations (tenant_id, created_at desc);

-- The rotation audit across tenants reads these rows newest first.
create index audit_events_dkim_rotation_idx on audit_events (id desc) where resource_type = 'dkim_rotation';
