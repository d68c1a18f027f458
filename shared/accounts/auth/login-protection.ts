// Throttles failed sign-ins per account and per client address (dashboard sign-ins, SMTP AUTH): after too many failures in a window, a lock with doubling
// length.
import type { AuthConfig } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { AppError } from '../../kernel/errors.js';
import { clearThrottle, countFailure, deleteSpentThrottles, latestLock, lockUntil } from './login-protection-queries.js';

export interface ProtectionDeps {
  sql: Queryable;
  config: { auth: AuthConfig };
  clock: Clock;
}

/**
 * The throttle key of an account: the address as typed, normalized, whether or not an account has
 * it, so the throttle itself does not tell which addresses are registered.
 */
export const accountKey = (email: string): string => `acct:${email.trim().toLowerCase()}`;
export const addressKey = (ip: string): string => `ip:${ip}`;
/**
 * The throttle key of a client address's SMTP AUTH failures (submission). Counted apart from its
 * dashboard sign-ins: a mail client retrying with a revoked key must not lock the people behind
 * the same address out of the dashboard, nor a password attack stop the mail of a host there.
 */
export const submissionAddressKey = (ip: string): string => `smtp-auth:${ip}`;

/** Failures a key may have within a window before it is locked. */
function limitOf(key: string, p: AuthConfig['login_protection']): number {
  if (key.startsWith('acct:')) return p.max_failures_per_account;
  if (key.startsWith('smtp-auth:')) return p.max_failures_per_submission_address;
  return p.max_failures_per_address;
}

/** How often (ms of the injected clock) one process sweeps rows whose window and lock have ended. */
const SWEEP_INTERVAL_MS = 10 * 60_000;
let lastSweep = 0;

/** Seconds until the latest running lock among the keys ends (at least 1), or undefined when none is locked. */
export async function lockedFor(deps: ProtectionDeps, keys: string[]): Promise<number | undefined> {
  if (keys.length === 0) return undefined;
  const now = deps.clock.now();
  const until = await latestLock(deps.sql, keys, now);
  if (!until) return undefined;
  return Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
}

/** Throws 429 rate_limited with Retry-After while any of the keys is locked. Checked before any password or code. */
export async function assertNotLocked(deps: ProtectionDeps, keys: string[]): Promise<void> {
  const seconds = await lockedFor(deps, keys);
  if (seconds === undefined) return;
  throw new AppError('rate_limited', `too many failed sign-in attempts; retry after ${seconds}s`, {
    headers: { 'Retry-After': String(seconds) },
  });
}

/**
 * Counts a failure against each key. A key reaching its limit within the window is locked for
 * lockout_seconds, doubled by every further failure, at most max_lockout_seconds: each lock ends,
 * so the owner of an attacked account is slowed down for a while, never shut out for good.
 */
export async function recordFailure(deps: ProtectionDeps, keys: string[]): Promise<void> {
  const p = deps.config.auth.login_protection;
  const now = deps.clock.now();
  const staleStart = new Date(now.getTime() - p.window_seconds * 1000);
  for (const key of keys) {
    const failures = await countFailure(deps.sql, key, now, staleStart);
    const limit = limitOf(key, p);
    if (failures < limit) continue;
    const doublings = Math.min(failures - limit, 30);
    const seconds = Math.min(p.lockout_seconds * 2 ** doublings, p.max_lockout_seconds);
    await lockUntil(deps.sql, key, new Date(now.getTime() + seconds * 1000));
  }
  if (now.getTime() - lastSweep > SWEEP_INTERVAL_MS) {
    lastSweep = now.getTime();
    await deleteSpentThrottles(deps.sql, staleStart, now);
  }
}

/** A completed sign-in (or password reset) forgives the account's failures and ends its lock. */
export async function clearAccountFailures(deps: ProtectionDeps, email: string): Promise<void> {
  await clearThrottle(deps.sql, accountKey(email));
}
