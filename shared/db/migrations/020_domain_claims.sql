-- Domain claims: several tenants may claim a name; the claim whose own DKIM record is found in DNS owns it, the others are superseded; unproven claims expire.

alter table domains
  -- When this claim proved control of the name (its own DKIM key was found at its selector). Kept
  -- until the domain is deleted: drift does not release the name.
  add column owned_at timestamptz,
  -- Another claim proved control first: this one is closed and never verifies.
  add column superseded_at timestamptz,
  -- An unowned claim (pending or superseded) is removed after this; null once owned.
  add column expires_at timestamptz;

-- Domains verified or drifted before claims existed had their DKIM record verified, and a name had
-- one claim then: they own their names. So does any domain whose DKIM record ever verified.
update domains d
   set owned_at = coalesce(d.verified_at, d.drifted_at,
                           (select r.verified_at from domain_records r where r.domain_id = d.id and r.kind = 'dkim'), d.created_at)
 where d.verified_at is not null or d.drifted_at is not null
    or exists (select 1 from domain_records r where r.domain_id = d.id and r.kind = 'dkim' and (r.verified or r.verified_at is not null));
-- The rest are pending claims: seven days (the default claim_expiry_days) from this upgrade to prove control.
update domains set expires_at = now() + interval '7 days' where owned_at is null;

-- A name has at most one owner; pending claims of it do not lock it.
alter table domains drop constraint domains_name_key;
create unique index domains_owned_name_key on domains (name) where owned_at is not null;
-- One claim per tenant and name.
alter table domains add constraint domains_tenant_name_key unique (tenant_id, name);
-- The claims of a name (superseding them when one wins).
create index domains_name_idx on domains (name);
-- The expiry sweep.
create index domains_claim_expiry_idx on domains (expires_at) where owned_at is null;

-- Only the owning claim can send or drift; a superseded claim never owned.
alter table domains
  add constraint domains_verified_owned check ((verified_at is null and drifted_at is null) or owned_at is not null),
  add constraint domains_superseded_unowned check (superseded_at is null or owned_at is null);
