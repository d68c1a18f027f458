// Password sign-in and its 2FA challenge: throttled, refused for suspended tenants, and a session only once every factor passed.
import type { Config } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { accountSuspended, AppError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';
import { findTenantById } from '../tenants/queries.js';
import { writeAudit } from '../../operations/audit/log.js';
import { issueSession, type Session } from './accounts.js';
import type { SessionTokens } from './jwt.js';
import { accountKey, addressKey, assertNotLocked, clearAccountFailures, recordFailure } from './login-protection.js';
import { burnPasswordCheck, verifyPassword } from './passwords.js';
import { looksLikeTotpCode, matchTotpStep, openTotpSecret } from './totp.js';
import { matchRecoveryCode } from './recovery-codes.js';
import { claimTotpStep, countUnusedRecoveryCodes, findTotp, numberOrNull, unusedRecoveryCodes, useRecoveryCode } from './two-factor-queries.js';
import { findUserByEmail, findUserById, type User } from './users.js';

export interface SignInDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  tokens: SessionTokens;
  vault: SealedBox;
}

export interface TotpPending {
  requires_totp: true;
  totp_session_token: string;
}

async function assertTenantActive(deps: SignInDeps, tenantId: string): Promise<void> {
  const tenant = await findTenantById(deps.sql, tenantId);
  if (!tenant || tenant.status === 'suspended') throw accountSuspended();
}

/**
 * Checks email and password. With 2FA on, answers with a short-lived challenge token instead
 * of a session. Failures count against the account and the client address (429 when locked).
 * A correct password does not clear the account's failures: only a completed sign-in does,
 * so re-entering a known password never buys more guesses at the second factor.
 */
export async function signIn(deps: SignInDeps, input: { email: string; password: string }, ip: string): Promise<Session | TotpPending> {
  const keys = [accountKey(input.email), addressKey(ip)];
  await assertNotLocked(deps, keys);
  const user = await findUserByEmail(deps.sql, input.email);
  const ok = user ? await verifyPassword(input.password, user.password_hash) : await burnPasswordCheck(input.password, deps.config.auth.bcrypt_cost);
  if (!user || !ok) {
    await recordFailure(deps, keys);
    throw new AppError('unauthenticated', 'invalid email or password');
  }
  // After the password: only someone who knows it learns that the tenant is suspended.
  await assertTenantActive(deps, user.tenant_id);
  const totp = await findTotp(deps.sql, user.id);
  if (totp?.enabled_at) {
    const { token } = await deps.tokens.issueTotpChallenge({
      userId: user.id,
      tenantId: user.tenant_id,
      ttlSeconds: deps.config.auth.totp.session_ttl_seconds,
      now: deps.clock.now(),
    });
    return { requires_totp: true, totp_session_token: token };
  }
  await clearAccountFailures(deps, user.email);
  return issueSession(deps, user.id, user.tenant_id);
}

const wrongCode = () => new AppError('unauthenticated', 'wrong, expired or already used code');

/** The user a challenge token stands for, if it is still valid: unexpired, and issued after the last password change. */
async function challengeUser(deps: SignInDeps, token: string): Promise<User | undefined> {
  const claims = await deps.tokens.verifyTotpChallenge(token, deps.clock.now());
  if (!claims || !isUuid(claims.userId) || !isUuid(claims.tenantId)) return undefined;
  const user = await findUserById(deps.sql, claims.userId);
  if (!user || user.tenant_id !== claims.tenantId) return undefined;
  if (claims.issuedAtMs < user.sessions_valid_after.getTime()) return undefined;
  return user;
}

/**
 * Second step of a sign-in with 2FA: a 6-digit code (within the configured window, and of a
 * later time step than any code accepted before) or an unused recovery code.
 */
export async function completeTotpChallenge(deps: SignInDeps, input: { totp_session_token: string; code: string }, ip: string): Promise<Session> {
  await assertNotLocked(deps, [addressKey(ip)]);
  const user = await challengeUser(deps, input.totp_session_token);
  if (!user) {
    await recordFailure(deps, [addressKey(ip)]);
    throw new AppError('unauthenticated', 'invalid or expired totp_session_token: sign in again');
  }
  const keys = [accountKey(user.email), addressKey(ip)];
  await assertNotLocked(deps, keys);
  await assertTenantActive(deps, user.tenant_id);
  const totp = await findTotp(deps.sql, user.id);
  // 2FA was switched off since the password step: that token belongs to a flow that no longer exists.
  if (!totp?.enabled_at) throw new AppError('unauthenticated', 'two-factor sign-in is not enabled any more: sign in again');
  const code = input.code.trim();
  const passed = looksLikeTotpCode(code)
    ? await acceptTotpCode(deps, user, totp.secret_sealed, numberOrNull(totp.last_used_step), code)
    : await acceptRecoveryCode(deps, user, code, ip);
  if (!passed) {
    await recordFailure(deps, keys);
    throw wrongCode();
  }
  await clearAccountFailures(deps, user.email);
  return issueSession(deps, user.id, user.tenant_id);
}

async function acceptTotpCode(deps: SignInDeps, user: User, sealed: Buffer, lastStep: number | null, code: string): Promise<boolean> {
  const secret = openTotpSecret(deps.vault, user.id, sealed);
  const step = await matchTotpStep(secret, code, deps.clock.now(), deps.config.auth.totp.window_steps, lastStep);
  return step !== undefined && (await claimTotpStep(deps.sql, user.id, step));
}

async function acceptRecoveryCode(deps: SignInDeps, user: User, code: string, ip: string): Promise<boolean> {
  const id = await matchRecoveryCode(code, await unusedRecoveryCodes(deps.sql, user.id));
  if (!id) return false;
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    if (!(await useRecoveryCode(tx, id, at))) return false;
    await writeAudit(tx, {
      tenantId: user.tenant_id,
      actor: { type: 'user', id: user.id, ip },
      action: 'auth.recovery_code_used',
      resourceType: 'user',
      resourceId: user.id,
      metadata: { remaining: await countUnusedRecoveryCodes(tx, user.id) },
      at,
    });
    return true;
  });
}
