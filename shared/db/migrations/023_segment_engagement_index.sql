-- Segments' engagement rules ("opened / clicked within N days") need the addresses that received an open (or a
-- click) of one tenant since a time. 021's events_engagement_idx leads with the recipient (a per-contact look-up)
-- and does not hold the type, so that set costs a scan of the events table or a heap visit per event; this index
-- yields it from the index alone (an index-only scan of one tenant, one type, one time range), which the segment
-- query then hashes against the tenant's contacts.
create index events_engagement_window_idx on events (tenant_id, type, occurred_at) include (recipient)
  where type in ('open', 'click');
