-- Saved audit filters: a user's named audit page states (q, range, event_type, actor, date_from, date_to).
-- The 4 KB and 50-per-user limits are enforced by shared/audit/filters.ts (422), the size also here as a backstop.
create table audit_filters (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  user_id uuid not null references users(id) on delete cascade,
  name text not null,
  definition jsonb not null,
  created_at timestamptz not null,
  constraint audit_filters_size check (octet_length(name) + octet_length(definition::text) <= 8192)
);

create index audit_filters_user_idx on audit_filters (user_id, created_at desc);
