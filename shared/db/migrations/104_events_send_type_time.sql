-- The events of a send are found by (send_id, type, occurred_at), no longer by send_id alone.
--
-- Why: a batch of tracking hits reads the recent clicks of its sends (the "every link at once" rule looks back a few
-- seconds), and the bounce, warm-up and reputation code asks whether a send has an event of a type. Through an index
-- on send_id alone each of those visited every event of the send in the heap (opens, clicks, delivery events, and
-- the dead versions the scanner re-flag leaves), then filtered: in the ingestion bench that read was 70 % of
-- PostgreSQL's time per hit. The composite index answers them as a range; it replaces the old one, so an event
-- write maintains as many indexes as before, and lookups by send_id alone still use it.
create index events_send_type_time_idx on events (send_id, type, occurred_at);
drop index events_send_idx;
