// Throttles failed sign-ins per account and per client address: after too many failures in a window, a lock with doubling length (429 + Retry-After).
import type { AuthConfig } from '../config/index.js';
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/connection.js';
import { AppError } from '../errors.js';
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

const isAccountKey = (key: string) => key.startsWith('acct:');

/** How often (ms of the injected clock) one process sweeps rows whose window and lock have ended. */
const SWEEP_INTERVAL_MS = 10 * 60_000;
let lastSweep = 0;

/** Throws 429 rate_limited with Retry-After while any of the keys is locked. Checked before any password or code. */
export async function assertNotLocked(deps: ProtectionDeps, keys: string[]): Promise<void> {
  const now = deps.clock.now();
  const until = await latestLock(deps.sql, keys, now);
  if (!until) return;
  const seconds = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
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
    const limit = isAccountKey(key) ? p.max_failures_per_account : p.max_failures_per_address;
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
