-- License keys: signed entitlements for self-hosted Mailpath instances (a plan, optionally a tenant, optionally an expiry),
-- and the Ed25519 key pair that signs them. The private key is sealed with the master key, like DKIM keys, so every
-- process sharing this database signs with the same key and the key never sits in the clear at rest.

create table license_signing_keys (
  kid text primary key,
  -- The public half as a JWK ({kty: OKP, crv: Ed25519, x}), served by GET /license/public-key for offline checks.
  public_jwk jsonb not null,
  -- PKCS#8 DER of the private half, sealed by shared/secrets/sealed-box.ts with the context 'license-signing:<kid>'.
  private_key_sealed bytea not null,
  created_at timestamptz not null default now()
);

create table license_keys (
  -- Also the token's jti claim.
  id uuid primary key,
  -- The compact JWS handed to the customer; unique so a revocation can name it.
  key text not null,
  plan_id text not null references plans(id),
  -- A license issued to a tenant goes with it (and stops validating) when the tenant is deleted.
  tenant_id uuid references tenants(id) on delete cascade,
  expires_at timestamptz,
  -- Set once by revocation; a revoked key fails its next validation.
  revoked_at timestamptz,
  signing_kid text not null references license_signing_keys(kid),
  created_by_user_id uuid references users(id) on delete set null,
  created_at timestamptz not null default now(),
  constraint license_keys_key_key unique (key)
);

create index license_keys_created_idx on license_keys (created_at desc, id desc);
create index license_keys_tenant_idx on license_keys (tenant_id) where tenant_id is not null;
