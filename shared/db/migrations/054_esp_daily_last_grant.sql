-- The per-ESP sub-cap counter is taken in batches (one statement per tick for every send that asked meanwhile, as the
-- warm-up daily counter): an enforced batch may be granted less than it asked, and the statement returns the new
-- count only, so the grant itself is kept on the row as warmup_daily_counters does.
alter table warmup_esp_daily add column last_grant integer not null default 0;
