-- Outbound event webhooks (issue 16): a tenant's endpoints, and the outbox of what each must receive.
--
-- event_webhooks: one row per endpoint. The signing secret is sealed under the master key (bound to
-- the endpoint); after a rotation the previous one stays until previous_secret_expires_at, and both
-- sign every POST until then.
create table event_webhooks (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  url text not null,
  description text,
  -- A non-empty subset of sent, delivered, deferred, bounced, complained, opened, clicked, unsubscribed, inbound.
  event_types text[] not null,
  enabled boolean not null default true,
  secret_sealed text not null,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  secret_rotated_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index event_webhooks_tenant_idx on event_webhooks (tenant_id, created_at desc, id desc);

-- event_webhook_deliveries: the outbox. A row is written in the transaction that records the event
-- (one per endpoint subscribed to its type), so an event is never lost; (webhook_id, event_id) is
-- unique, so recording it again never queues it twice. The worker claims due rows (attempts + 1,
-- next_attempt_at pushed past the attempt's deadline, as a lease) and records the outcome of that
-- attempt only; the row is also the delivery log and, once dead, the dead letter.
create table event_webhook_deliveries (
  id uuid primary key,
  tenant_id uuid not null references tenants(id) on delete cascade,
  webhook_id uuid not null references event_webhooks(id) on delete cascade,
  -- events.id, or inbound_recipients.id for inbound events.
  event_id uuid not null,
  event_type text not null,
  -- The JSON body POSTed ({ type, timestamp, data }), fixed when the event is recorded.
  payload jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'delivered', 'dead')),
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  last_status integer,
  last_error text,
  last_duration_ms integer,
  created_at timestamptz not null,
  last_attempt_at timestamptz,
  delivered_at timestamptz,
  dead_at timestamptz,
  constraint event_webhook_deliveries_once unique (webhook_id, event_id)
);

create index event_webhook_deliveries_due_idx on event_webhook_deliveries (next_attempt_at) where status = 'pending';
create index event_webhook_deliveries_log_idx on event_webhook_deliveries (webhook_id, created_at desc, id desc);
create index event_webhook_deliveries_dead_idx on event_webhook_deliveries (tenant_id, dead_at desc, id desc) where status = 'dead';
