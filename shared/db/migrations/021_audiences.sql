-- Audiences: contacts with their reserved columns and custom fields, the custom-field catalog, lists and
-- their members, segments, bulk imports (the uploaded file kept in chunks so any process can run or resume
-- the job), MD5 suppression lists, and per-tenant counts kept exact by statement-level triggers.

-- Substring search over addresses (GET /contacts?q=) through a trigram index.
create extension if not exists pg_trgm;

create table contacts (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  -- Trimmed, lower-cased, domain in IDNA (ASCII) form (shared/email.ts); null once erased.
  email text,
  -- SHA-256 of the normalized address (set by the trigger below): kept after an erasure so the person stays suppressed.
  email_hash bytea not null,
  first_name text,
  last_name text,
  phone text,
  company text,
  city text,
  state text,
  country text,
  postal_code text,
  title text,
  timezone text,
  mobile_phone text,
  email_format text,
  confirmed_status text,
  mobile_status text,
  crm_id text,
  crm_contact_id text,
  crm_lead_id text,
  status text not null default 'active' check (status in ('active', 'unsubscribed', 'deleted')),
  -- Values keyed by the catalog's keys; values of deleted catalog entries stay here, ignored.
  custom_fields jsonb not null default '{}',
  -- 0..23 UTC, the hour with most opens in the last 90 days; written only by the best-send-hour worker.
  best_send_hour smallint check (best_send_hour between 0 and 23),
  unsubscribed_at timestamptz,
  erased_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint contacts_tenant_hash_key unique (tenant_id, email_hash),
  constraint contacts_erased check ((erased_at is null) = (email is not null)),
  constraint contacts_email_normalized check (email is null or (email = lower(email) and length(email) between 3 and 254)),
  constraint contacts_custom_fields_object check (jsonb_typeof(custom_fields) = 'object')
);

-- Pages of a tenant's contacts, newest first, per status.
-- The hash follows the address; an erasure clears the address and keeps the hash.
create function contacts_hash_email() returns trigger language plpgsql as $$
begin
  if new.email is not null then new.email_hash := sha256(convert_to(new.email, 'UTF8')); end if;
  return new;
end $$;

create trigger contacts_hash_email before insert or update of email on contacts
  for each row execute function contacts_hash_email();

create index contacts_tenant_created_idx on contacts (tenant_id, created_at desc, id desc);
create index contacts_tenant_status_idx on contacts (tenant_id, status, created_at desc, id desc);
create index contacts_tenant_email_idx on contacts (tenant_id, email);
create index contacts_email_trgm_idx on contacts using gin (email gin_trgm_ops);

-- Exact contact counts per tenant and status, so GET /contacts' total never counts rows.
create table contact_counts (
  tenant_id uuid not null references tenants(id) on delete cascade,
  status text not null,
  n bigint not null default 0,
  primary key (tenant_id, status)
);

create function contact_counts_apply() returns trigger language plpgsql as $$
begin
  if tg_op in ('UPDATE', 'DELETE') then
    insert into contact_counts (tenant_id, status, n)
      select tenant_id, status, -count(*) from old_rows group by tenant_id, status
      on conflict (tenant_id, status) do update set n = contact_counts.n + excluded.n;
  end if;
  if tg_op in ('UPDATE', 'INSERT') then
    insert into contact_counts (tenant_id, status, n)
      select tenant_id, status, count(*) from new_rows group by tenant_id, status
      on conflict (tenant_id, status) do update set n = contact_counts.n + excluded.n;
  end if;
  return null;
end $$;

create trigger contact_counts_insert after insert on contacts
  referencing new table as new_rows for each statement execute function contact_counts_apply();
create trigger contact_counts_update after update on contacts
  referencing old table as old_rows new table as new_rows for each statement execute function contact_counts_apply();
create trigger contact_counts_delete after delete on contacts
  referencing old table as old_rows for each statement execute function contact_counts_apply();

create table contact_custom_fields (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  key text not null check (key ~ '^[a-z][a-z0-9_]{0,49}$'),
  label text not null,
  type text not null check (type in ('text', 'longtext', 'number', 'date', 'datetime', 'boolean', 'select', 'email', 'url', 'phone')),
  options text[],
  required boolean not null default false,
  position integer not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint contact_custom_fields_key unique (tenant_id, key),
  constraint contact_custom_fields_select_options check (type <> 'select' or cardinality(options) > 0)
);

create table lists (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  description text,
  -- Kept exact by the list_members triggers below.
  member_count bigint not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index lists_tenant_idx on lists (tenant_id, created_at desc, id desc);
create unique index lists_tenant_name_key on lists (tenant_id, lower(name));

create table list_members (
  list_id uuid not null references lists(id) on delete cascade,
  contact_id uuid not null references contacts(id) on delete cascade,
  tenant_id uuid not null references tenants(id) on delete cascade,
  added_at timestamptz not null,
  primary key (list_id, contact_id)
);

-- Cursor pages of a list's members (added order) and a contact's lists.
create index list_members_page_idx on list_members (list_id, added_at, contact_id);
create index list_members_contact_idx on list_members (contact_id);

create function list_member_counts_apply() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    update lists l set member_count = l.member_count - d.n
      from (select list_id, count(*) as n from old_rows group by list_id) d where l.id = d.list_id;
  else
    update lists l set member_count = l.member_count + d.n
      from (select list_id, count(*) as n from new_rows group by list_id) d where l.id = d.list_id;
  end if;
  return null;
end $$;

create trigger list_member_counts_insert after insert on list_members
  referencing new table as new_rows for each statement execute function list_member_counts_apply();
create trigger list_member_counts_delete after delete on list_members
  referencing old table as old_rows for each statement execute function list_member_counts_apply();

create table segments (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  -- { op: AND | OR, rules: [rule | group] }, validated by shared/segments before it is stored.
  definition jsonb not null,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index segments_tenant_idx on segments (tenant_id, created_at desc, id desc);

-- Engagement rules of segments (opened / clicked within N days) and the best-send-hour worker read these.
create index events_engagement_idx on events (tenant_id, recipient, occurred_at desc) where type in ('open', 'click');

create table contact_imports (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  api_key_id uuid references api_keys(id) on delete set null,
  format text not null check (format in ('csv', 'json')),
  -- Header mapping, on_existing (update | skip), list_id, delimiter.
  options jsonb not null default '{}',
  status text not null check (status in ('uploading', 'queued', 'running', 'completed', 'failed')),
  bytes bigint not null default 0,
  chunks integer not null default 0,
  -- rows_total is known once the file is read to its end.
  rows_total bigint,
  rows_done bigint not null default 0,
  inserted bigint not null default 0,
  updated bigint not null default 0,
  skipped bigint not null default 0,
  invalid bigint not null default 0,
  -- A file-level failure (empty file, bad encoding, header problem), for people.
  error text,
  created_at timestamptz not null,
  started_at timestamptz,
  finished_at timestamptz
);

create index contact_imports_tenant_idx on contact_imports (tenant_id, created_at desc);

-- The uploaded file, in order, so the job can stream it from any process and re-read it on resume.
create table contact_import_chunks (
  import_id uuid not null references contact_imports(id) on delete cascade,
  seq integer not null,
  data bytea not null,
  primary key (import_id, seq)
);

create table contact_import_errors (
  import_id uuid not null references contact_imports(id) on delete cascade,
  line bigint not null,
  reason text not null,
  primary key (import_id, line)
);

create table md5_lists (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  -- Kept exact by the trigger below.
  entry_count bigint not null default 0,
  created_at timestamptz not null,
  updated_at timestamptz not null
);

create index md5_lists_tenant_idx on md5_lists (tenant_id, created_at desc, id desc);

-- MD5 of the lower-cased address, as advertisers' suppression files carry it.
create table md5_list_entries (
  list_id uuid not null references md5_lists(id) on delete cascade,
  hash bytea not null check (length(hash) = 16),
  primary key (list_id, hash)
);

create function md5_list_counts_apply() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    update md5_lists l set entry_count = l.entry_count - d.n
      from (select list_id, count(*) as n from old_rows group by list_id) d where l.id = d.list_id;
  else
    update md5_lists l set entry_count = l.entry_count + d.n
      from (select list_id, count(*) as n from new_rows group by list_id) d where l.id = d.list_id;
  end if;
  return null;
end $$;

create trigger md5_list_counts_insert after insert on md5_list_entries
  referencing new table as new_rows for each statement execute function md5_list_counts_apply();
create trigger md5_list_counts_delete after delete on md5_list_entries
  referencing old table as old_rows for each statement execute function md5_list_counts_apply();

-- Suppression by hash: an erased contact's address is kept only as its SHA-256, and the send gate
-- looks every recipient up by hash, so an erased person stays suppressed.
alter table suppressions add column email_hash bytea;
update suppressions set email_hash = sha256(convert_to(email, 'UTF8'));
alter table suppressions alter column email_hash set not null;
create function suppressions_hash_email() returns trigger language plpgsql as $$
begin
  if new.email is not null then new.email_hash := sha256(convert_to(new.email, 'UTF8')); end if;
  return new;
end $$;
create trigger suppressions_hash_email before insert or update of email on suppressions
  for each row execute function suppressions_hash_email();
alter table suppressions alter column email drop not null;
alter table suppressions drop constraint suppressions_email_normalized;
alter table suppressions add constraint suppressions_email_normalized
  check (email is null or (email = lower(email) and email !~ '\s' and length(email) between 3 and 254));
alter table suppressions drop constraint suppressions_reason_check;
alter table suppressions add constraint suppressions_reason_check
  check (reason in ('hard_bounce', 'complaint', 'unsubscribe', 'manual', 'spam_trap', 'erased'));
alter table suppressions drop constraint suppressions_source_check;
alter table suppressions add constraint suppressions_source_check
  check (source in ('api', 'bounce', 'complaint', 'unsubscribe-link', 'erasure'));
create unique index suppressions_tenant_hash_key on suppressions (tenant_id, email_hash);
