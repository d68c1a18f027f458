-- A bounce mailbox that keeps failing is polled less and less often: the poller counts its failures in a row
-- (reset by a poll that works) and waits poll_interval_s doubled per failure, up to a day, before the next.
alter table bounce_mailboxes add column consecutive_poll_failures integer not null default 0;
