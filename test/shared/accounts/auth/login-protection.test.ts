// Failed sign-in counters against a real database: concurrent failures all count, locks are never shortened, spent rows are swept.
import t from 'tap';
import { ManualClock } from '../../../../shared/kernel/clock.js';
import { loadConfig } from '../../../../shared/config/index.js';
import { connect, type Sql } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import {
  accountKey,
  addressKey,
  assertNotLocked,
  clearAccountFailures,
  lockedFor,
  recordFailure,
  submissionAddressKey,
  type ProtectionDeps,
} from '../../../../shared/accounts/auth/login-protection.js';
import type { TestLike } from '../../../helpers/app.js';
import { createTestDatabase } from '../../../helpers/db.js';

async function setup(t: TestLike): Promise<ProtectionDeps & { sql: Sql; clock: ManualClock }> {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max: 6 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  return { sql, config: loadConfig({}), clock: new ManualClock(new Date(Date.UTC(2031, 0, 1))) };
}

const lockOf = async (sql: Sql, key: string) =>
  (await sql<{ failures: number; locked_until: Date | null }[]>`select failures, locked_until from login_throttles where key = ${key}`)[0];

t.test('keys are normalized addresses and client addresses', async (t) => {
  t.equal(accountKey('  Ann@Example.TEST '), 'acct:ann@example.test');
  t.equal(addressKey('::1'), 'ip:::1');
  t.equal(submissionAddressKey('::1'), 'smtp-auth:::1');
});

t.test('SMTP AUTH failures of an address have their own key and limit, apart from its sign-ins', async (t) => {
  const deps = await setup(t);
  const smtp = submissionAddressKey('10.0.0.7');
  for (let i = 0; i < 9; i++) await recordFailure(deps, [smtp]);
  t.equal(await lockedFor(deps, [smtp]), undefined, 'below max_failures_per_submission_address (10)');
  await recordFailure(deps, [smtp]);
  t.equal(await lockedFor(deps, [smtp]), 30);
  t.equal(await lockedFor(deps, [addressKey('10.0.0.7')]), undefined, 'sign-ins from the address are not locked');
  await assertNotLocked(deps, [addressKey('10.0.0.7')]);
  deps.clock.advance(29_500);
  t.equal(await lockedFor(deps, [smtp]), 1, 'rounded up to a whole second');
  deps.clock.advance(500);
  t.equal(await lockedFor(deps, [smtp]), undefined, 'the lock ends');
  t.equal(await lockedFor(deps, []), undefined);
});

t.test('concurrent failures all count, and the one reaching the limit locks', async (t) => {
  const deps = await setup(t);
  const key = accountKey('ann@example.test');
  await Promise.all(Array.from({ length: 5 }, () => recordFailure(deps, [key])));
  const row = await lockOf(deps.sql, key);
  t.equal(row!.failures, 5);
  t.same(row!.locked_until, new Date(deps.clock.now().getTime() + 30_000));
  await t.rejects(assertNotLocked(deps, [addressKey('10.0.0.1'), key]), { name: 'AppError', message: /retry after 30s/ });
  await assertNotLocked(deps, [addressKey('10.0.0.1')]);
  t.pass('another key is not locked');
});

t.test('a later, shorter lock never shortens a longer one', async (t) => {
  const deps = await setup(t);
  const key = addressKey('10.0.0.9');
  for (let i = 0; i < 25; i++) await recordFailure(deps, [key]);
  const long = (await lockOf(deps.sql, key))!.locked_until!;
  t.same(long, new Date(deps.clock.now().getTime() + 900_000), 'the 25th failure: 30 s doubled five times is 960 s, capped at max_lockout_seconds (900)');
  // A process whose window restarted (count back at the limit) would set a 30 s lock.
  await deps.sql`update login_throttles set failures = 19 where key = ${key}`;
  await recordFailure(deps, [key]);
  t.same((await lockOf(deps.sql, key))!.locked_until, long);
});

t.test('clearing forgets an account; spent rows are swept', async (t) => {
  const deps = await setup(t);
  await recordFailure(deps, [accountKey('bob@example.test'), addressKey('10.0.0.2')]);
  await clearAccountFailures(deps, 'BOB@example.test');
  t.equal(await lockOf(deps.sql, accountKey('bob@example.test')), undefined);
  t.ok(await lockOf(deps.sql, addressKey('10.0.0.2')), 'the address keeps its count');

  deps.clock.advance(3_600_000);
  await recordFailure(deps, [addressKey('10.0.0.3')]);
  t.equal(await lockOf(deps.sql, addressKey('10.0.0.2')), undefined, 'a row whose window ended long ago is gone');
  t.ok(await lockOf(deps.sql, addressKey('10.0.0.3')));
});

t.test('the settings come from config/auth.yaml and are validated', async (t) => {
  const auth = loadConfig({}).auth;
  t.same(auth.login_protection, {
    window_seconds: 900,
    max_failures_per_account: 5,
    max_failures_per_address: 20,
    max_failures_per_submission_address: 10,
    lockout_seconds: 30,
    max_lockout_seconds: 900,
  });
  t.same(auth.totp, { session_ttl_seconds: 300, window_steps: 1 });
  t.same(auth.password_reset, { token_ttl_seconds: 3600, min_response_ms: 400, max_emails_per_hour: 5 });
  t.throws(() => loadConfig({ MAILPATH_CONFIG__AUTH__LOGIN_PROTECTION__MAX_FAILURES_PER_ACCOUNT: '0' }), {
    name: 'ConfigError',
    message: /login_protection\.max_failures_per_account/,
  });
  t.throws(() => loadConfig({ MAILPATH_CONFIG__AUTH__TOTP__WINDOW_STEPS: '99' }), { name: 'ConfigError', message: /totp\.window_steps/ });
});
