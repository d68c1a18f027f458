// A signed-in user changes their password: the current one checked (throttled like sign-in), registration's strength rules, every other session ended, a
// fresh session for the caller.
import type { Config } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { AppError } from '../../kernel/errors.js';
import { writeAudit } from '../../operations/audit/log.js';
import { findTenantById } from '../tenants/queries.js';
import type { Session } from './accounts.js';
import type { CredentialResolver } from './credentials.js';
import type { SessionTokens } from './jwt.js';
import { accountKey, addressKey, assertNotLocked, clearAccountFailures, recordFailure } from './login-protection.js';
import { acceptNewPassword, passwordContext, verifyPassword } from './passwords.js';
import { setPassword, spendOtherResetTokens } from './password-reset-queries.js';
import { findUserById } from './users.js';

export interface PasswordChangeDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  tokens: SessionTokens;
  /** Told after the change, so cached sessions of the user end in this process at once. */
  credentials: Pick<CredentialResolver, 'forgetUser'>;
}

/**
 * Checks the current password (a wrong one counts as a failed sign-in of the account and the client
 * address, so a stolen session cannot be used to guess it), applies the registration rules to the new
 * one, and sets it. Every session and pending 2FA challenge issued before the change ends (the same
 * millisecond cut-off as a reset, users.sessions_valid_after), as does every reset link mailed before;
 * the caller gets a new session issued at the change instant, so it stays signed in.
 */
export async function changePassword(
  deps: PasswordChangeDeps,
  userId: string,
  input: { current_password: string; new_password: string },
  ip: string,
): Promise<Session> {
  const user = await findUserById(deps.sql, userId);
  // The session was valid a moment ago; a user deleted since then has no session either.
  if (!user) throw new AppError('unauthenticated', 'this session no longer has a user');
  const keys = [accountKey(user.email), addressKey(ip)];
  await assertNotLocked(deps, keys);
  if (!(await verifyPassword(input.current_password, user.password_hash))) {
    await recordFailure(deps, keys);
    throw new AppError('unauthenticated', 'current_password is wrong');
  }
  const tenant = await findTenantById(deps.sql, user.tenant_id);
  const passwordHash = await acceptNewPassword(input.new_password, deps.config.auth, 'new_password', passwordContext(user.email, tenant?.slug));
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    await setPassword(tx, user.id, passwordHash, at);
    await spendOtherResetTokens(tx, user.id, at);
    await writeAudit(tx, {
      tenantId: user.tenant_id,
      actor: { type: 'user', id: user.id, ip },
      action: 'auth.password_changed',
      resourceType: 'user',
      resourceId: user.id,
      at,
    });
  });
  deps.credentials.forgetUser(user.id);
  await clearAccountFailures(deps, user.email);
  // Issued at the cut-off itself (sessions issued before it are refused, not one issued at it), so it
  // survives the change whatever the clock does next.
  const { token, expiresAt } = await deps.tokens.issue({
    userId: user.id,
    tenantId: user.tenant_id,
    ttlSeconds: deps.config.auth.session_ttl_seconds,
    now: at,
  });
  return { token, user_id: user.id, tenant_id: user.tenant_id, expires_at: expiresAt };
}
