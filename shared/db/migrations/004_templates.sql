-- Reusable Liquid templates of a tenant: a subject and an HTML and/or text body, checked for syntax when saved.

create table templates (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  name text not null,
  subject text not null,
  -- At least one body: a template that renders no body cannot be sent.
  body_html text,
  body_text text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint templates_has_body check (body_html is not null or body_text is not null)
);

-- Names are unique per tenant regardless of case, so "Welcome" and "welcome" cannot both exist.
create unique index templates_tenant_name_key on templates (tenant_id, lower(name));

-- Keyset paging of GET /templates, newest first.
create index templates_tenant_created_idx on templates (tenant_id, created_at desc, id desc);
