-- The IP watchdog and worker alerts (issue 17).
--
-- ip_quarantines: the source addresses (members of config/ip-pools.yaml's pools) quarantined now,
-- one row per address: no delivery leaves from it until quarantined_until or a release. A row whose
-- quarantined_until has passed is over (every reader compares with the clock); the
-- ip-quarantine-expiry worker deletes it and records the expiry.
create table ip_quarantines (
  address text primary key,
  -- The pool of the delivery that met the block (an address may sit in several pools).
  pool text not null,
  quarantined_at timestamptz not null,
  quarantined_until timestamptz not null,
  rule text not null,
  -- The event that started it.
  event_id bigint not null
);

-- What happened to pool addresses: quarantined (with the reply that caused it), released by an
-- operator, or expired at the end of the cool-down. Newest first for /admin/ip-watchdog.
create table ip_watchdog_events (
  id bigserial primary key,
  occurred_at timestamptz not null,
  kind text not null check (kind in ('quarantined', 'released', 'expired')),
  address text not null,
  pool text,
  rule text,
  reply text,
  -- The remote host that answered ("mx1.example.net [192.0.2.1]").
  destination text,
  send_id uuid,
  quarantined_until timestamptz,
  -- Who released it (a user id), for 'released'.
  actor_id text
);

create index ip_watchdog_events_address_idx on ip_watchdog_events (address, id desc);

-- Worker alerts: failing ticks in a row, and the last alert raised (failing / recovered).
alter table worker_ticks
  add column consecutive_failures integer not null default 0,
  add column last_alert_at timestamptz,
  add column last_alert_event text;
