-- The outbound log: every send with its gate decisions and signed message, its delivery attempts, and Idempotency-Key answers.

create table sends (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  domain_id uuid references domains(id) on delete set null,
  api_key_id uuid references api_keys(id) on delete set null,
  source text not null check (source in ('api', 'smtp', 'campaign')),
  mode text not null check (mode in ('live', 'test')),
  status text not null check (status in ('queued', 'deferred', 'dropped', 'simulated', 'sending', 'delivered', 'bounced', 'failed')),
  from_email text not null,
  to_email text not null,
  subject text not null,
  -- The RFC 5322 Message-ID (without angle brackets) and the VERP envelope sender.
  message_id text not null,
  envelope_from text not null,
  gate_decisions jsonb not null default '[]',
  -- The signed message as delivered; null when nothing will ever be delivered (dropped).
  message bytea,
  size_bytes integer,
  defer_until timestamptz,
  -- Why the send ended as it did (drop reason, last remote reply of a bounce).
  status_detail text,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index sends_tenant_idx on sends (tenant_id, created_at desc, id desc);
create index sends_tenant_recipient_idx on sends (tenant_id, to_email, created_at desc);

create table send_attempts (
  id bigserial primary key,
  send_id uuid not null references sends(id) on delete cascade,
  attempted_at timestamptz not null,
  -- The host actually talked to (MX or relay) and what it answered.
  remote_host text,
  outcome text not null check (outcome in ('delivered', 'deferred', 'bounced')),
  smtp_code integer,
  enhanced_code text,
  reply text,
  duration_ms integer not null
);

create index send_attempts_send_idx on send_attempts (send_id, id);

create table idempotency_keys (
  tenant_id uuid not null references tenants(id) on delete cascade,
  key text not null,
  -- SHA-256 of the canonical request: the same key with another body is a conflict.
  request_hash text not null,
  status integer not null,
  response jsonb not null,
  created_at timestamptz not null,
  primary key (tenant_id, key)
);

create index idempotency_keys_expiry_idx on idempotency_keys (created_at);
