-- The per-tenant suppression list: addresses the outbound pipeline drops mail to (manual entries, hard bounces, complaints, unsubscribes).

create table suppressions (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants(id) on delete cascade,
  -- Trimmed, lower-cased, domain in IDNA (ASCII) form by shared/suppressions/service.ts, so the
  -- unique key below is also the look-up key of the send gate.
  email text not null,
  reason text not null check (reason in ('hard_bounce', 'complaint', 'unsubscribe', 'manual', 'spam_trap')),
  -- Who put it there: the API, bounce processing, a complaint feedback loop, or an unsubscribe link.
  source text not null check (source in ('api', 'bounce', 'complaint', 'unsubscribe-link')),
  -- Free text such as the remote SMTP reply of a hard bounce.
  detail text,
  -- The send that caused it. No foreign key yet: sends do not exist yet.
  message_id uuid,
  created_at timestamptz not null,
  constraint suppressions_tenant_email_key unique (tenant_id, email),
  -- A guard against a writer that skipped normalization: such a row could never match a look-up.
  constraint suppressions_email_normalized check (email = lower(email) and email !~ '\s' and length(email) between 3 and 254)
);

-- Cursor pages of a tenant's list, newest first.
create index suppressions_tenant_created_idx on suppressions (tenant_id, created_at desc, id desc);
