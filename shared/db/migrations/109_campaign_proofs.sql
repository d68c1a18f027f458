-- Proof sends: a campaign rendered for a chosen contact and sent to a few addresses of the sender's choosing,
-- outside the campaign's audience, counters and stats (sends.campaign_id stays null; campaign_proofs ties them).
alter table sends drop constraint sends_source_check;
-- NOT VALID: every existing row holds a source of the narrower list already; new and changed rows are checked.
alter table sends add constraint sends_source_check check (source in ('api', 'smtp', 'campaign', 'proof')) not valid;

create table campaign_proofs (
  send_id uuid primary key references sends(id) on delete cascade,
  campaign_id uuid not null references campaigns(id) on delete cascade,
  tenant_id uuid not null references tenants(id) on delete cascade,
  -- The contact the proof was rendered for; null: rendered as nobody (the proof address, empty fields).
  contact_id uuid,
  created_at timestamptz not null
);

create index campaign_proofs_campaign_idx on campaign_proofs (campaign_id, created_at desc);
