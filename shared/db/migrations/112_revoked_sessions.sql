-- Sessions signed out before they expire. A session is a stateless JWT, so ending one (the dashboard's sign-out) needs a
-- record the credential resolver checks: its jti, kept until the token would have expired anyway.
--
-- Why per jti rather than users.sessions_valid_after: that cut-off ends every session of the user (a password change);
-- signing out of one browser must leave the user's other browsers and API sessions signed in.
create table revoked_sessions (
  jti text primary key,
  user_id uuid not null references users (id) on delete cascade,
  expires_at timestamptz not null
);

-- The resolver reads a user's unexpired revocations with the user's row: one range of this index.
create index revoked_sessions_user_idx on revoked_sessions (user_id, expires_at);
