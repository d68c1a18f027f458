// Signing one session out before it expires: its jti is recorded in revoked_sessions, which the credential resolver
// reads with the user's row. Other sessions of the user stay signed in (a password change is what ends them all).
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import type { CredentialResolver } from './credentials.js';
import type { SessionTokens } from './jwt.js';
import { insertRevokedSession } from './sign-out-queries.js';

interface Deps {
  sql: Queryable;
  tokens: SessionTokens;
  clock: Clock;
  credentials: Pick<CredentialResolver, 'forgetUser'>;
}

/**
 * Revokes the session a token stands for. Nothing to do for a token that is not a valid session (already expired,
 * forged, an API key): signing out needs no valid session. Answers whether a session was revoked.
 */
export async function signOutSession(deps: Deps, token: string): Promise<boolean> {
  const now = deps.clock.now();
  const claims = await deps.tokens.verify(token, now);
  if (!claims?.sessionId) return false;
  const revoked = await insertRevokedSession(deps.sql, {
    jti: claims.sessionId,
    userId: claims.userId,
    expiresAt: new Date(claims.expiresAt * 1000),
    now,
  });
  deps.credentials.forgetUser(claims.userId);
  return revoked;
}
