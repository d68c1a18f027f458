// Password reset by e-mail: a single-use token (stored hashed, one hour) mailed on request; confirming it sets the password and ends earlier sessions.
import { createHash, randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Config } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { AppError } from '../../kernel/errors.js';
import type { SystemMail } from '../../sending/system-mail/mailer.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { CredentialResolver } from './credentials.js';
import { addressKey, assertNotLocked, clearAccountFailures, recordFailure } from './login-protection.js';
import { acceptNewPassword, passwordContext } from './passwords.js';
import { consumeResetToken, countResetTokensSince, findResetToken, insertResetToken, setPassword, spendOtherResetTokens } from './password-reset-queries.js';
import { findTenantById } from '../tenants/queries.js';
import { findUserByEmail, findUserById } from './users.js';

export interface PasswordResetDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  systemMail: Pick<SystemMail, 'sendLater'>;
  /** Told after a password change, so cached sessions of the user end in this process at once. */
  credentials: Pick<CredentialResolver, 'forgetUser'>;
}

const hashToken = (token: string) => createHash('sha256').update(token, 'utf8').digest('hex');

/** Where the e-mail points: the dashboard's reset page at the public address, carrying the token. */
export function resetLink(config: Config, token: string): string {
  const url = new URL('/app/reset-password', config.publicUrl);
  url.searchParams.set('token', token);
  return url.toString();
}

function resetMessage(config: Config, email: string, token: string, minutes: number) {
  const link = resetLink(config, token);
  const text = [
    `Someone (hopefully you) asked to reset the password of the Mailpath account ${email}.`,
    '',
    `To choose a new password, open this link within ${minutes} minutes (it works once):`,
    link,
    '',
    `Or send the token to the API: POST /api/v1/auth/password-reset/confirm {"token": "${token}", "new_password": "..."}`,
    '',
    'If you did not ask for this, ignore this e-mail: your password stays as it is.',
  ].join('\n');
  return { to: email, subject: 'Reset your Mailpath password', text };
}

/**
 * Mails a reset link when the address has an account, and answers the same either way. The
 * e-mail goes out in the background and every answer waits until min_response_ms has passed,
 * so neither the answer nor its timing tells whether the account exists.
 */
export async function requestPasswordReset(deps: PasswordResetDeps, email: string, ip: string): Promise<{ status: 'ok' }> {
  const started = performance.now();
  const settings = deps.config.auth.password_reset;
  try {
    const user = await findUserByEmail(deps.sql, email.trim());
    if (user) {
      const at = deps.clock.now();
      const recent = await countResetTokensSince(deps.sql, user.id, new Date(at.getTime() - 3_600_000));
      if (recent < settings.max_emails_per_hour) {
        const token = randomBytes(32).toString('base64url');
        await deps.sql.begin(async (tx) => {
          await insertResetToken(tx, {
            userId: user.id,
            tokenHash: hashToken(token),
            expiresAt: new Date(at.getTime() + settings.token_ttl_seconds * 1000),
            ip,
            at,
          });
          await writeAudit(tx, {
            tenantId: user.tenant_id,
            actor: { type: 'system', id: null, ip },
            action: 'auth.password_reset_requested',
            resourceType: 'user',
            resourceId: user.id,
            at,
          });
        });
        deps.systemMail.sendLater(resetMessage(deps.config, user.email, token, Math.round(settings.token_ttl_seconds / 60)));
      }
    }
  } finally {
    const wait = settings.min_response_ms - (performance.now() - started);
    if (wait > 0) await sleep(wait);
  }
  return { status: 'ok' };
}

const badToken = () => new AppError('bad_request', 'token: invalid, already used or expired; request a new reset e-mail');

/**
 * Sets the new password with an unused, unexpired token. Ends every session issued before (and
 * every other reset link of the user). Bad tokens count as failed sign-ins of the client address.
 */
export async function confirmPasswordReset(
  deps: PasswordResetDeps,
  input: { token: string; new_password: string },
  ip: string,
): Promise<{ status: 'password_changed' }> {
  await assertNotLocked(deps, [addressKey(ip)]);
  const now = deps.clock.now();
  const row = await findResetToken(deps.sql, hashToken(input.token));
  const user = row && !row.used_at && row.expires_at > now ? await findUserById(deps.sql, row.user_id) : undefined;
  if (!row || !user) {
    await recordFailure(deps, [addressKey(ip)]);
    throw badToken();
  }
  // Checked before the token is spent, so a weak choice can be corrected with the same link.
  const tenant = await findTenantById(deps.sql, user.tenant_id);
  const passwordHash = await acceptNewPassword(input.new_password, deps.config.auth, 'new_password', passwordContext(user.email, tenant?.slug));
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const userId = await consumeResetToken(tx, row.id, at);
    if (!userId) throw badToken();
    await setPassword(tx, userId, passwordHash, at);
    await spendOtherResetTokens(tx, userId, at);
    await writeAudit(tx, {
      tenantId: user.tenant_id,
      actor: { type: 'user', id: userId, ip },
      action: 'auth.password_reset_completed',
      resourceType: 'user',
      resourceId: userId,
      at,
    });
  });
  deps.credentials.forgetUser(user.id);
  await clearAccountFailures(deps, user.email);
  return { status: 'password_changed' };
}
