-- A tenant's default sender: the From address, display name and Reply-To that campaigns (and warm-up dispatches)
-- use when they name none. Without a row the default is derived from the tenant's oldest verified sending domain
-- (shared/sending/default-sender.ts), so a campaign written as the spec shows it, without from_email, can send.
create table tenant_senders (
  tenant_id uuid primary key references tenants(id) on delete cascade,
  from_email text not null,
  from_name text,
  reply_to text,
  updated_at timestamptz not null
);
