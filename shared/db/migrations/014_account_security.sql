-- Account security: TOTP second factor, recovery codes, password-reset tokens, failed-login throttles.

-- One row per user who started enrolment. enabled_at null = pending (enrol again replaces the secret).
create table user_totp (
  user_id uuid primary key references users(id) on delete cascade,
  -- The base32 secret sealed with the master key (context "totp-secret:<user id>").
  secret_sealed bytea not null,
  enabled_at timestamptz,
  -- Highest RFC 6238 time step accepted so far: a code of this step or an earlier one is a replay.
  last_used_step bigint,
  created_at timestamptz not null default now()
);

-- Single-use codes of the current enrolment (bcrypt hashes); replaced on every enrolment.
create table user_recovery_codes (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users(id) on delete cascade,
  code_hash text not null,
  used_at timestamptz,
  created_at timestamptz not null default now()
);

create index user_recovery_codes_user_idx on user_recovery_codes (user_id) where used_at is null;

-- Only the SHA-256 of a token is stored; the token itself travels in the e-mail only.
create table password_reset_tokens (
  id uuid primary key default gen_random_uuid(),
  user_id uuid not null references users(id) on delete cascade,
  token_hash text not null,
  expires_at timestamptz not null,
  used_at timestamptz,
  requested_ip text,
  created_at timestamptz not null default now(),
  constraint password_reset_tokens_hash_key unique (token_hash)
);

create index password_reset_tokens_user_idx on password_reset_tokens (user_id, created_at desc);

-- Failed sign-in attempts per account (acct:<email>) or client address (ip:<address>), shared by every process.
create table login_throttles (
  key text primary key,
  failures integer not null,
  window_started_at timestamptz not null,
  locked_until timestamptz
);

create index login_throttles_window_idx on login_throttles (window_started_at);
