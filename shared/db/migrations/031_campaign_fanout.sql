-- Campaign fan-out state that 030 lacks: how far materializing the target got (so a crash resumes there), the key
-- mode a send was started with, a claim lease on recipients (several processes share one campaign without holding a
-- transaction across a batch), held recipients found without a scan, and the count of recipients a cancel skipped.

-- The target's page cursor (list members' or the segment's keyset position) after the last materialized page;
-- targeted_at is set when the last page is in, and the fan-out sends only after it.
alter table campaigns add column target_cursor text;
alter table campaigns add column targeted_at timestamptz;
-- 'test' when POST send came with a test key: every send of the campaign is then simulated, as on the transactional API.
alter table campaigns add column send_mode text check (send_mode in ('live', 'test'));

-- A fan-out worker's claim on a pending recipient, until this instant; a claim of a dead process simply expires.
alter table campaign_recipients add column claimed_until timestamptz;
create index campaign_recipients_held_idx on campaign_recipients (campaign_id) where status = 'held';

alter table campaign_stats add column skipped_cancelled bigint not null default 0;
