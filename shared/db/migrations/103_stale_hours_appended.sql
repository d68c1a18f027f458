-- Stale hours are marked by appending a row, no longer by an upsert of one row per (tenant, hour).
--
-- Why: the upsert locked the (tenant, hour) row from the events insert until its transaction committed, so every
-- writer of a tenant's events in the same hour (tracking hit batches in every API process, delivery events) took its
-- turn behind the one before, through its commit: a busy tenant's event writes ran one transaction at a time, and
-- two writers marking two hours in different statements (a click burst re-flagged across an hour boundary) could
-- deadlock. An insert without a conflict target takes no lock on another writer's rows.
--
-- The rows are now marks: several per (tenant, hour) until the analytics-rollup worker claims them. The worker
-- deletes the marks it can lock (skip locked) of the hours it picks and recomputes those hours from the events, in
-- one transaction; a mark committed after its delete is still there for the next tick, and the events it stands for
-- were committed with it, so no event is left out of a rollup.
alter table analytics_stale_hours drop constraint analytics_stale_hours_pkey;
-- The worker groups the marks by (tenant, hour); a tenant's deletion finds its marks.
create index analytics_stale_hours_key_idx on analytics_stale_hours (tenant_id, hour);

create or replace function events_mark_rollup_stale() returns trigger language plpgsql as $$
begin
  insert into analytics_stale_hours (tenant_id, hour)
  select distinct tenant_id, date_trunc('hour', occurred_at, 'UTC') from new_events;
  return null;
end $$;
