// Sign-in throttling (per account, per client address, shared by processes) and suspension at sign-in, through the API.
import t from 'tap';
import { generate } from 'otplib';
import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../../shared/kernel/clock.js';
import type { Env } from '../../../shared/config/index.js';
import { buildApp } from '../../../api/app.js';
import { buildServices } from '../../../main/services.js';
import { buildTestApp, call, createKey, registerTenant, type TestApp, type TestLike, type TestTenant } from '../../helpers/app.js';

const P = 'MAILPATH_CONFIG__AUTH__LOGIN_PROTECTION__';
const WRONG = 'Wrong-password-99';

async function appAt(t: TestLike, env: Env = {}): Promise<TestApp & { clock: ManualClock }> {
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 30_000) * 30_000 + 5_000));
  return { ...(await buildTestApp(t, { clock, env })), clock };
}

/** POST /auth/login from a given client address. */
async function loginFrom(app: FastifyInstance, ip: string, email: string, password: string) {
  const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', remoteAddress: ip, payload: { email, password } });
  return { status: res.statusCode, headers: res.headers, body: res.json() };
}

const login = (app: FastifyInstance, user: { email: string }, password: string) => loginFrom(app, '127.0.0.1', user.email, password);

t.test('failures lock the account for a while, each further lock twice as long up to the cap; success clears it', async (t) => {
  const test = await appAt(t, { [`${P}MAX_LOCKOUT_SECONDS`]: '100' });
  const user = await registerTenant(test.app);
  for (let i = 0; i < 5; i++) t.equal((await login(test.app, user, WRONG)).status, 401);

  const locked = await login(test.app, user, user.password);
  t.equal(locked.status, 429, 'the right password waits too while locked');
  t.equal(locked.body.error, 'rate_limited');
  t.equal(locked.headers['retry-after'], '30');
  t.equal((await loginFrom(test.app, '10.9.9.9', user.email, user.password)).status, 429, 'from any address');

  test.clock.advance(31_000);
  t.equal((await login(test.app, user, WRONG)).status, 401, 'after the lock: one more try');
  t.equal((await login(test.app, user, user.password)).headers['retry-after'], '60', 'and the next lock is twice as long');
  test.clock.advance(61_000);
  t.equal((await login(test.app, user, WRONG)).status, 401);
  t.equal((await login(test.app, user, user.password)).headers['retry-after'], '100', 'capped at max_lockout_seconds');

  test.clock.advance(101_000);
  t.equal((await login(test.app, user, user.password)).status, 200, 'the owner gets in once the lock ends');
  t.equal((await login(test.app, user, WRONG)).status, 401);
  t.equal((await login(test.app, user, user.password)).status, 200, 'the count started again from zero');
});

t.test('failures of a window that has ended are forgiven; unknown addresses are throttled alike', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  for (let i = 0; i < 4; i++) await login(test.app, user, WRONG);
  test.clock.advance(901_000);
  for (let i = 0; i < 4; i++) t.equal((await login(test.app, user, WRONG)).status, 401);
  t.equal((await login(test.app, user, user.password)).status, 200, '4 + 4 failures in two windows never lock');

  const nobody = { email: 'nobody@example.test' };
  for (let i = 0; i < 5; i++) await login(test.app, nobody, WRONG);
  t.equal((await login(test.app, nobody, WRONG)).status, 429, 'an address without an account locks the same way');
});

t.test('one client address failing against many accounts is throttled; other addresses are not', async (t) => {
  const test = await appAt(t, { [`${P}MAX_FAILURES_PER_ADDRESS`]: '3' });
  const user = await registerTenant(test.app);
  for (let i = 0; i < 3; i++) t.equal((await loginFrom(test.app, '10.0.0.1', `guess-${i}@example.test`, WRONG)).status, 401);
  const blocked = await loginFrom(test.app, '10.0.0.1', user.email, user.password);
  t.equal(blocked.status, 429);
  t.equal(blocked.headers['retry-after'], '30');
  t.equal((await loginFrom(test.app, '10.0.0.2', user.email, user.password)).status, 200, 'the account itself is not locked');

  const reset = await test.app.inject({
    method: 'POST',
    url: '/api/v1/auth/password-reset/confirm',
    remoteAddress: '10.0.0.1',
    payload: { token: 'x'.repeat(43), new_password: 'Whatever-pass-1' },
  });
  t.equal(reset.statusCode, 429, 'the locked address cannot try reset tokens either');
});

t.test('bad reset tokens count against the client address', async (t) => {
  const test = await appAt(t, { [`${P}MAX_FAILURES_PER_ADDRESS`]: '3' });
  const confirmFrom = (ip: string) =>
    test.app.inject({
      method: 'POST',
      url: '/api/v1/auth/password-reset/confirm',
      remoteAddress: ip,
      payload: { token: 'y'.repeat(43), new_password: 'Whatever-pass-1' },
    });
  for (let i = 0; i < 3; i++) t.equal((await confirmFrom('10.1.1.1')).statusCode, 400);
  t.equal((await confirmFrom('10.1.1.1')).statusCode, 429);
  t.equal((await confirmFrom('10.1.1.2')).statusCode, 400, 'another address is still answered');
});

t.test('wrong 2FA codes and wrong passwords at 2FA disable count against the account', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const secret = (await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token })).body.data.secret;
  await call(test.app, 'POST', '/auth/2fa/verify', {
    token: user.token,
    body: { code: await generate({ secret, epoch: Math.floor(test.clock.now().getTime() / 1000) }) },
  });
  const pending = (await login(test.app, user, user.password)).body.data.totp_session_token;
  const good = await generate({ secret, epoch: Math.floor(test.clock.now().getTime() / 1000) + 30 });

  for (let i = 0; i < 3; i++)
    t.equal((await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: '000000' } })).status, 401);
  t.equal(
    (await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: 'zzzzz-zzzzz' } })).status,
    401,
    'a wrong recovery code',
  );
  t.equal((await call(test.app, 'POST', '/auth/2fa/disable', { token: user.token, body: { password: WRONG } })).status, 401);
  const locked = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: good } });
  t.equal(locked.status, 429, 'a right code waits too: guessing codes does not pay');
  t.equal((await login(test.app, user, user.password)).status, 429, 'and so does the password step');
  t.equal((await call(test.app, 'POST', '/auth/2fa/disable', { token: user.token, body: { password: user.password } })).status, 429);

  test.clock.advance(31_000);
  const fresh = (await login(test.app, user, user.password)).body.data.totp_session_token;
  const ok = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: fresh, code: good } });
  t.equal(ok.status, 200);
  t.equal((await test.sql`select 1 from login_throttles where key = ${`acct:${user.email}`}`).length, 0, 'the completed sign-in cleared the account');
});

t.test('the count is shared by every process on the database', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const ctx2 = await buildServices({ config: test.config, sql: test.sql, log: test.ctx.log, boss: test.boss, clock: test.clock });
  const app2 = await buildApp(ctx2);
  t.teardown(async () => {
    await app2.close();
    await ctx2.close();
  });
  for (let i = 0; i < 5; i++) await login(test.app, user, WRONG);
  t.equal((await login(app2, user, user.password)).status, 429, 'locked in the other process too');
});

t.test("a suspended tenant's users cannot sign in, finish a 2FA challenge or use their sessions", async (t) => {
  const test = await appAt(t);
  const user: TestTenant = await registerTenant(test.app);
  const twoFactor = await registerTenant(test.app);
  const key = await createKey(test.app, user);
  const secret = (await call(test.app, 'POST', '/auth/2fa/enroll', { token: twoFactor.token })).body.data.secret;
  await call(test.app, 'POST', '/auth/2fa/verify', {
    token: twoFactor.token,
    body: { code: await generate({ secret, epoch: Math.floor(test.clock.now().getTime() / 1000) }) },
  });
  const pending = (await login(test.app, twoFactor, twoFactor.password)).body.data.totp_session_token;

  const suspend = async (tenantId: string, status: 'active' | 'suspended') => {
    await test.sql`update tenants set status = ${status} where id = ${tenantId}`;
    test.ctx.credentials.forgetTenant(tenantId);
  };
  await suspend(user.tenantId, 'suspended');
  await suspend(twoFactor.tenantId, 'suspended');

  const refused = await login(test.app, user, user.password);
  t.equal(refused.status, 403);
  t.equal(refused.body.error, 'forbidden');
  t.match(refused.body.message, /suspended/);
  t.equal((await login(test.app, user, WRONG)).status, 401, 'a wrong password learns nothing about the suspension');
  const session = await call(test.app, 'GET', '/whoami', { token: user.token });
  t.equal(session.status, 403, 'a session issued before the suspension');
  t.match(session.body.message, /suspended/);
  const code = await generate({ secret, epoch: Math.floor(test.clock.now().getTime() / 1000) + 30 });
  const challenge = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code } });
  t.equal(challenge.status, 403, 'a 2FA challenge started before the suspension');
  t.equal(
    (await call(test.app, 'GET', '/whoami', { token: key.key })).status,
    200,
    'API keys are not sessions: reads go on (sends are refused by the suspended gate)',
  );

  await suspend(user.tenantId, 'active');
  t.equal((await login(test.app, user, user.password)).status, 200, 'lifted by unsuspending');
  t.equal((await call(test.app, 'GET', '/whoami', { token: user.token })).status, 200);
});
