-- What the last statement took from a counter: lets one statement serve many concurrent sends (take up to n, report how many it got) without reading the counter first.

alter table tenant_monthly_usage add column last_grant integer not null default 0;
alter table warmup_daily_counters add column last_grant integer not null default 0;
