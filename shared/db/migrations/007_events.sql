-- The event feed of every message: send, delivered, deferred, bounce (hard / soft), dropped; later open, click, complaint, unsubscribe.

create table events (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  type text not null check (type in ('send', 'delivered', 'deferred', 'bounce', 'dropped', 'open', 'click', 'complaint', 'unsubscribe')),
  -- bounce: hard / soft; other types may leave it null.
  subtype text,
  send_id uuid references sends(id) on delete cascade,
  -- The RFC 5322 Message-ID of the send (without angle brackets), for look-ups by message.
  message_id text,
  recipient text not null,
  -- What happened, for people: the remote reply, the deferral's reason and time, the drop reason.
  detail jsonb not null default '{}',
  occurred_at timestamptz not null,
  constraint events_bounce_subtype check (type <> 'bounce' or subtype in ('hard', 'soft'))
);

create index events_tenant_idx on events (tenant_id, occurred_at desc, id desc);
create index events_tenant_message_idx on events (tenant_id, message_id);
create index events_send_idx on events (send_id);
