-- Inbound mail: messages the MX accepted (raw bytes stored once), one row per accepted recipient, workspace mailboxes and their invites, tenant webhook settings and webhook deliveries.

create table inbound_messages (
  id uuid primary key,
  received_at timestamptz not null,
  -- The SMTP session: who connected, what it said, the envelope sender ('' for a null sender).
  remote_address text not null,
  helo text,
  tls boolean not null default false,
  mail_from text not null,
  size_bytes integer not null,
  -- The message as stored and handed on: the client's bytes with our Received and
  -- Authentication-Results headers prepended.
  raw bytea not null,
  authentication_results text,
  -- Header fields read once at reception so lists can search without reparsing.
  header_message_id text,
  header_from text,
  subject text
);

create index inbound_messages_received_idx on inbound_messages (received_at);

create table inbound_recipients (
  id uuid primary key,
  message_id uuid not null references inbound_messages(id) on delete cascade,
  -- The envelope recipient as accepted (lower-cased domain).
  recipient text not null,
  -- tenant: an address at a tenant domain or a workspace mailbox; bounce: a VERP bounce
  -- address of an outbound send (the tenant is known once the report is mapped).
  kind text not null check (kind in ('tenant', 'bounce')),
  tenant_id uuid references tenants(id) on delete cascade,
  created_at timestamptz not null
);

create index inbound_recipients_message_idx on inbound_recipients (message_id);
create index inbound_recipients_tenant_idx on inbound_recipients (tenant_id, created_at desc);

create table mailboxes (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  domain_id uuid not null references domains(id) on delete cascade,
  -- Lower-case; one mailbox per address on the whole platform (domains are unique too).
  address text not null,
  display_name text,
  -- Set when an invite is consumed; a mailbox user signs in with it.
  password_hash text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint mailboxes_address_key unique (address)
);

create index mailboxes_tenant_idx on mailboxes (tenant_id, created_at desc, id desc);

create table mailbox_invites (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  mailbox_id uuid not null references mailboxes(id) on delete cascade,
  -- SHA-256 of the token; the token itself is shown once to the inviter.
  token_hash text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  created_by uuid references users(id) on delete set null,
  created_at timestamptz not null,
  constraint mailbox_invites_token_key unique (token_hash)
);

create table mailbox_messages (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  mailbox_id uuid not null references mailboxes(id) on delete cascade,
  inbound_message_id uuid not null references inbound_messages(id) on delete cascade,
  recipient text not null,
  header_from text,
  subject text,
  seen boolean not null default false,
  received_at timestamptz not null
);

create index mailbox_messages_mailbox_idx on mailbox_messages (mailbox_id, received_at desc, id desc);

create table inbound_webhooks (
  tenant_id uuid primary key references tenants(id) on delete cascade,
  webhook_url text,
  enabled boolean not null default false,
  -- The signing secret, sealed with the master key: it is needed in clear to sign.
  secret_sealed text,
  secret_rotated_at timestamptz,
  updated_at timestamptz not null
);

-- One POST per (message, tenant recipient): its state, retries and dead letter.
create table inbound_webhook_deliveries (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  inbound_recipient_id uuid not null references inbound_recipients(id) on delete cascade,
  status text not null check (status in ('pending', 'delivered', 'dead')),
  attempts integer not null default 0,
  -- The receiver's last HTTP status (null when it never answered) and what went wrong.
  last_status integer,
  last_error text,
  next_attempt_at timestamptz,
  created_at timestamptz not null,
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  dead_at timestamptz
);

create index inbound_webhook_deliveries_dead_idx on inbound_webhook_deliveries (tenant_id, dead_at desc) where status = 'dead';
create index inbound_webhook_deliveries_recipient_idx on inbound_webhook_deliveries (inbound_recipient_id);
