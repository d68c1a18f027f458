-- The audit chain without a global write lock: writers insert unchained rows (chain_seq, prev_hash and hash null);
-- one appender at a time (under its own advisory lock) chains committed rows in batches, giving each the next
-- chain_seq. The chain order is chain_seq, so a row that commits late is simply chained later, never skipped.
alter table audit_events
  add column chain_seq bigint,
  alter column prev_hash drop not null,
  alter column hash drop not null;

-- Rows written before this migration were chained in id order under the old lock.
update audit_events a set chain_seq = o.n
from (select id, row_number() over (order by id) as n from audit_events) o
where a.id = o.id;

alter table audit_events add constraint audit_events_chained_together
  check ((chain_seq is null) = (hash is null) and (hash is null) = (prev_hash is null));

create unique index audit_events_chain_seq_key on audit_events (chain_seq);
-- The appender's queue: the unchained rows, oldest first.
create index audit_events_unchained_idx on audit_events (id) where chain_seq is null;
-- Time-ranged exports (CSV, PDF) across the whole log or one tenant.
create index audit_events_tenant_created_idx on audit_events (tenant_id, created_at, id);
