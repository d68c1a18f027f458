// A signed-in user's TOTP 2FA: enrol (pending secret), verify (enable, recovery codes shown once), status, and disable with the password.
import { writeAudit } from '../../operations/audit/log.js';
import { AppError, conflict } from '../../kernel/errors.js';
import type { SignInDeps } from './sign-in.js';
import { accountKey, addressKey, assertNotLocked, recordFailure } from './login-protection.js';
import { verifyPassword } from './passwords.js';
import { hashRecoveryCodes, newRecoveryCodes } from './recovery-codes.js';
import { matchTotpStep, newTotpSecret, openTotpSecret, otpauthUrl, qrCodeDataUrl, sealTotpSecret } from './totp.js';
import { countUnusedRecoveryCodes, deleteTotp, enableTotp, findTotp, numberOrNull, replaceRecoveryCodes, storePendingTotp } from './two-factor-queries.js';
import { findUserById, type User } from './users.js';

export type TwoFactorDeps = SignInDeps;

async function currentUser(deps: TwoFactorDeps, userId: string): Promise<User> {
  const user = await findUserById(deps.sql, userId);
  // The session was valid a moment ago; a user deleted since then has no session either.
  if (!user) throw new AppError('unauthenticated', 'this session no longer has a user');
  return user;
}

const alreadyEnabled = () => conflict('two-factor sign-in is already enabled; disable it first to enrol a new authenticator');

/**
 * Stores a new secret (sealed) without enabling 2FA; enrolling again before verifying replaces
 * it, so only the last QR code scanned works.
 */
export async function enrollTotp(deps: TwoFactorDeps, userId: string): Promise<{ secret: string; otpauth_url: string; qr_code_dataurl: string }> {
  const user = await currentUser(deps, userId);
  if ((await findTotp(deps.sql, user.id))?.enabled_at) throw alreadyEnabled();
  const secret = newTotpSecret();
  const stored = await storePendingTotp(deps.sql, user.id, sealTotpSecret(deps.vault, user.id, secret), deps.clock.now());
  if (!stored) throw alreadyEnabled();
  const url = otpauthUrl(user.email, secret);
  return { secret, otpauth_url: url, qr_code_dataurl: await qrCodeDataUrl(url) };
}

/** Enables 2FA with a code from the pending secret; returns the recovery codes, the only time they are shown. */
export async function verifyTotpEnrollment(
  deps: TwoFactorDeps,
  userId: string,
  code: string,
  ip: string,
): Promise<{ enabled_at: string; recovery_codes: string[] }> {
  const totp = await findTotp(deps.sql, userId);
  if (!totp) throw conflict('no enrolment is pending: POST /auth/2fa/enroll first');
  if (totp.enabled_at) throw alreadyEnabled();
  const secret = openTotpSecret(deps.vault, userId, totp.secret_sealed);
  const now = deps.clock.now();
  const step = await matchTotpStep(secret, code, now, deps.config.auth.totp.window_steps, numberOrNull(totp.last_used_step));
  if (step === undefined) throw new AppError('unauthenticated', 'wrong or expired code');
  const codes = newRecoveryCodes();
  const hashes = await hashRecoveryCodes(codes, deps.config.auth.bcrypt_cost);
  const user = await currentUser(deps, userId);
  const enabledAt = await deps.sql.begin(async (tx) => {
    // The step of this code counts as used: it cannot sign in a second time.
    const at = await enableTotp(tx, userId, now, step);
    if (!at) throw alreadyEnabled();
    await replaceRecoveryCodes(tx, userId, hashes, now);
    await writeAudit(tx, {
      tenantId: user.tenant_id,
      actor: { type: 'user', id: userId, ip },
      action: 'auth.2fa_enabled',
      resourceType: 'user',
      resourceId: userId,
      metadata: { recovery_codes: codes.length },
      at: now,
    });
    return at;
  });
  return { enabled_at: enabledAt.toISOString(), recovery_codes: codes };
}

export async function totpStatus(
  deps: TwoFactorDeps,
  userId: string,
): Promise<{ enabled: boolean; enabled_at: string | null; recovery_codes_remaining: number }> {
  const totp = await findTotp(deps.sql, userId);
  const enabledAt = totp?.enabled_at ?? null;
  return {
    enabled: enabledAt !== null,
    enabled_at: enabledAt?.toISOString() ?? null,
    recovery_codes_remaining: enabledAt ? await countUnusedRecoveryCodes(deps.sql, userId) : 0,
  };
}

/**
 * Turns 2FA off (secret and recovery codes deleted) after checking the current password. A wrong
 * password counts as a failed sign-in, so a stolen session cannot be used to guess the password.
 */
export async function disableTotp(deps: TwoFactorDeps, userId: string, password: string, ip: string): Promise<{ status: 'disabled' }> {
  const user = await currentUser(deps, userId);
  const keys = [accountKey(user.email), addressKey(ip)];
  await assertNotLocked(deps, keys);
  if (!(await verifyPassword(password, user.password_hash))) {
    await recordFailure(deps, keys);
    throw new AppError('unauthenticated', 'wrong password');
  }
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    if (!(await deleteTotp(tx, userId))) return;
    await writeAudit(tx, {
      tenantId: user.tenant_id,
      actor: { type: 'user', id: userId, ip },
      action: 'auth.2fa_disabled',
      resourceType: 'user',
      resourceId: userId,
      at,
    });
  });
  return { status: 'disabled' };
}
