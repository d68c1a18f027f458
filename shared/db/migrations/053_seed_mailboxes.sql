-- Seed mailboxes (/admin/seedlist): platform-wide addresses the super-admin watches to see where campaign mail lands.
-- Every active seed gets a copy of each campaign send (same gates and pipeline as the campaign's recipients, but
-- outside its audience and stats); each copy is an expected hit whose placement (inbox or spam) is recorded when the
-- copy is seen, through the MX or a POP3 mailbox, and reads as missing once the window passes.

create table seed_mailboxes (
  id uuid primary key default gen_random_uuid(),
  -- Normalized (lower-case, A-label domain); immutable.
  email text not null,
  provider text not null check (provider in ('gmail', 'outlook', 'yahoo', 'aol', 'icloud', 'proton', 'fastmail', 'custom')),
  label text,
  active boolean not null default true,
  -- A POP3 mailbox (bounce_mailboxes) the seed's copies are fetched from, for a seed hosted elsewhere.
  bounce_mailbox_id uuid references bounce_mailboxes(id) on delete set null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  constraint seed_mailboxes_email_key unique (email)
);

create index seed_mailboxes_active_idx on seed_mailboxes (email) where active;
create index seed_mailboxes_bounce_mailbox_idx on seed_mailboxes (bounce_mailbox_id) where bounce_mailbox_id is not null;

-- One seed copy of one campaign: made for every active seed when the campaign's target is fixed.
create table seed_hits (
  id uuid primary key default gen_random_uuid(),
  seed_id uuid not null references seed_mailboxes(id) on delete cascade,
  campaign_id uuid not null references campaigns(id) on delete cascade,
  tenant_id uuid not null references tenants(id) on delete cascade,
  -- The seed's address when the copy was made.
  email text not null,
  -- Fixed beforehand, as a recipient's: a copy retried after a crash keeps it (and its Message-ID <send_id@host>,
  -- by which the copy is recognized when it arrives).
  send_id uuid not null unique,
  -- pending: not handed to the send path yet; sent: a send exists (sends.id = send_id); not_sent: the send path
  -- would not send it (its address invalid for the message).
  send_state text not null default 'pending' check (send_state in ('pending', 'sent', 'not_sent')),
  claimed_until timestamptz,
  sent_at timestamptz,
  -- What was observed; null while the copy has not been seen.
  placement text check (placement in ('inbox', 'spam')),
  placement_source text check (placement_source in ('mx', 'pop3')),
  observed_at timestamptz,
  created_at timestamptz not null,
  constraint seed_hits_campaign_seed_key unique (campaign_id, seed_id)
);

create index seed_hits_seed_idx on seed_hits (seed_id, created_at desc, id desc);
create index seed_hits_pending_idx on seed_hits (campaign_id) where send_state = 'pending';
