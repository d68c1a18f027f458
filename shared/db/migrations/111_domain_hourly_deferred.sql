-- Deferrals per recipient domain and hour, for /analytics/esp-scores' deferred count (the dashboard's provider table).
--
-- Why a column of the existing rollup: the ESP scores read analytics_domain_hourly only; counting the deferred events
-- there, in the worker's pass that already groups an hour's events by domain, costs a read nothing more.
alter table analytics_domain_hourly add column deferred bigint not null default 0;

-- The hours of the last 30 days (the ESP window) that hold a deferral are recomputed by the worker's next runs, so the
-- window counts the deferrals from before this column. Per tenant, one range of events_engagement_window_idx
-- (tenant_id, type, occurred_at) each.
insert into analytics_stale_hours (tenant_id, hour)
select t.id, h.hour
from tenants t
cross join lateral (
  select distinct date_trunc('hour', e.occurred_at, 'UTC') as hour
  from events e
  where e.tenant_id = t.id and e.type = 'deferred' and e.occurred_at >= now() - interval '30 days'
) h;
