-- POP3 bounce mailboxes: a tenant's mailbox elsewhere that receives its bounces and feedback-loop reports,
-- polled by the bounce-mailbox-poll worker, and the UIDLs already fetched from each (so nothing is fed to the
-- intake twice, also across restarts).
create table bounce_mailboxes (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  host text not null,
  port integer not null check (port between 1 and 65535),
  username text not null,
  -- AES-256-GCM under the master key, bound to the row ("bounce-mailbox:<id>"); never returned.
  password_sealed bytea not null,
  enabled boolean not null,
  delete_after_read boolean not null,
  poll_interval_s integer not null,
  use_tls_implicit boolean not null,
  next_poll_at timestamptz not null,
  last_polled_at timestamptz,
  -- null after a poll that worked.
  last_poll_error text,
  messages_fetched bigint not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index bounce_mailboxes_tenant_idx on bounce_mailboxes (tenant_id, created_at desc, id desc);
create index bounce_mailboxes_due_idx on bounce_mailboxes (next_poll_at) where enabled;

create table bounce_mailbox_uidls (
  mailbox_id uuid not null references bounce_mailboxes(id) on delete cascade,
  uidl text not null,
  -- The stored message fed to the intake; null for a message skipped (too big).
  inbound_message_id uuid references inbound_messages(id) on delete set null,
  fetched_at timestamptz not null,
  primary key (mailbox_id, uidl)
);
