-- Cheaper contact writes (bulk imports write a million rows): drop an index no query uses, keep the status index only
-- for the statuses that are rare, and let the trigram index collect new entries in a larger pending list.

-- Contacts are looked up by (tenant_id, email_hash); nothing searches (tenant_id, email) by equality.
drop index if exists contacts_tenant_email_idx;

-- Listing by status: active (most rows) and the default (active + unsubscribed) walk contacts_tenant_created_idx;
-- only the rare statuses need their own, much smaller, index.
drop index if exists contacts_tenant_status_idx;
create index contacts_tenant_rare_status_idx on contacts (tenant_id, status, created_at desc, id desc) where status <> 'active';

-- A GIN index takes inserts into a pending list and merges them in bulk; 32 MB (the default is 4 MB) makes a large
-- import merge a few times instead of hundreds. Searches read the pending list too, so it stays bounded.
alter index contacts_email_trgm_idx set (gin_pending_list_limit = 32768);
