// POST /auth/password: the change, other sessions ended and a fresh one answered, the current password checked and throttled, the strength rules, who may
// call it, the audit row.
import t from 'tap';
import { generate } from 'otplib';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant, type TestApp } from '../../helpers/app.js';
import { createTestMailbox, mailboxSession, verifiedMailDomain } from '../../helpers/inbound-rows.js';
import { addMember, MEMBER_PASSWORD } from '../../helpers/team.js';

const NEW_PASSWORD = 'Fresh-secret-2077';

async function appAt(t: Parameters<typeof buildTestApp>[0]): Promise<TestApp & { clock: ManualClock }> {
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 30_000) * 30_000 + 5_000));
  return { ...(await buildTestApp(t, { clock })), clock };
}

const change = (test: TestApp, token: string, body: unknown, ip = '127.0.0.1') =>
  test.app.inject({ method: 'POST', url: '/api/v1/auth/password', remoteAddress: ip, headers: { authorization: `Bearer ${token}` }, payload: body as object });

const login = (test: TestApp, email: string, password: string) => call(test.app, 'POST', '/auth/login', { body: { email, password } });

t.test('the change: the new password signs in, the old does not; other sessions end, the answer is a working session', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const other = (await login(test, user.email, user.password)).body.data.token as string;
  // The change happens in the same second as the sessions were issued: the cut-off is to the millisecond.
  test.clock.advance(250);
  const res = await change(test, user.token, { current_password: user.password, new_password: NEW_PASSWORD });
  t.equal(res.statusCode, 200);
  const session = res.json().data;
  t.match(session, { token: String, user_id: user.userId, tenant_id: user.tenantId, expires_at: Number });
  t.equal(session.expires_at, Math.floor(test.clock.now().getTime() / 1000) + test.config.auth.session_ttl_seconds, 'a login-length session');

  t.equal((await call(test.app, 'GET', '/whoami', { token: other })).status, 401, 'another session of the user is refused');
  t.equal((await call(test.app, 'GET', '/whoami', { token: user.token })).status, 401, 'so is the session that made the change');
  const who = await call(test.app, 'GET', '/whoami', { token: session.token });
  t.equal(who.status, 200, 'the answered session works');
  t.equal(who.body.data.user.id, user.userId);
  test.clock.advance(1);
  t.equal((await call(test.app, 'GET', '/whoami', { token: session.token })).status, 200, 'and keeps working');

  t.equal((await login(test, user.email, user.password)).status, 401, 'the old password is gone');
  t.equal((await login(test, user.email, NEW_PASSWORD)).status, 200, 'the new one signs in');

  const audit = await test.sql<{ actor_type: string; actor_id: string; tenant_id: string; resource_id: string; ip: string }[]>`
    select actor_type, actor_id, tenant_id, resource_id, ip from audit_events where action = 'auth.password_changed'`;
  t.same(audit, [{ actor_type: 'user', actor_id: user.userId, tenant_id: user.tenantId, resource_id: user.userId, ip: '127.0.0.1' }], 'one audit row');
});

t.test('reset links mailed before the change stop working; a pending 2FA challenge ends too', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const secret = (await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token })).body.data.secret;
  const codeAt = (offset: number) => generate({ secret, epoch: Math.floor(test.clock.now().getTime() / 1000) + offset * 30 });
  await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: await codeAt(0) } });
  const pending = (await login(test, user.email, user.password)).body.data.totp_session_token;
  await test.sql`
    insert into password_reset_tokens (user_id, token_hash, expires_at, created_at)
    values (${user.userId}, ${'f'.repeat(64)}, ${new Date(test.clock.now().getTime() + 3_600_000)}, ${test.clock.now()})`;
  test.clock.advance(300);

  const res = await change(test, user.token, { current_password: user.password, new_password: NEW_PASSWORD });
  t.equal(res.statusCode, 200, 'a session that passed 2FA changes the password without another code');
  const stale = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: await codeAt(1) } });
  t.equal(stale.status, 401, 'the challenge started before the change is refused');
  const [row] = await test.sql<{ used_at: Date | null }[]>`select used_at from password_reset_tokens where user_id = ${user.userId}`;
  t.ok(row!.used_at, 'the outstanding reset token is spent');
  t.equal((await login(test, user.email, NEW_PASSWORD)).body.data.requires_totp, true, '2FA stays on');
});

t.test('a wrong current password is 401 and counts towards the sign-in throttle', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const wrong = await change(test, user.token, { current_password: 'Not-the-password-1', new_password: NEW_PASSWORD });
  t.equal(wrong.statusCode, 401);
  t.match(wrong.json(), { ok: false, error: 'unauthenticated', message: /current_password/ });
  t.equal((await call(test.app, 'GET', '/whoami', { token: user.token })).status, 200, 'the session is not ended by a wrong guess');
  for (let i = 0; i < 4; i++) t.equal((await change(test, user.token, { current_password: `Guess-number-${i}x`, new_password: NEW_PASSWORD })).statusCode, 401);

  const locked = await change(test, user.token, { current_password: user.password, new_password: NEW_PASSWORD });
  t.equal(locked.statusCode, 429, 'after 5 wrong guesses the account is locked, even for the right password');
  t.equal(locked.headers['retry-after'], '30');
  t.equal((await login(test, user.email, user.password)).status, 429, 'the same lock as sign-in: guessing here costs sign-in attempts');
  t.equal((await test.sql`select 1 from audit_events where action = 'auth.password_changed'`).length, 0);

  test.clock.advance(31_000);
  t.equal(
    (await change(test, user.token, { current_password: user.password, new_password: NEW_PASSWORD })).statusCode,
    200,
    'after the lock the right password works',
  );
  t.equal((await login(test, user.email, NEW_PASSWORD)).status, 200, 'and the change cleared the account failures');
});

t.test('a weak new password is 422 naming new_password, and changes nothing', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app, { tenant_slug: 'acme-pw-change' });
  const local = user.email.split('@')[0]!;
  for (const [password, why] of [
    ['short1A', 'too short'],
    ['alllowercaseletters', 'one class'],
    ['Acme-pw-change-9', 'contains the tenant slug'],
    [`X-${local}`, 'contains the address'],
    ['Password1234', 'common'],
  ] as const) {
    const res = await change(test, user.token, { current_password: user.password, new_password: password });
    t.equal(res.statusCode, 422, why);
    t.match(res.json(), { error: 'validation_error', message: /^new_password: / });
  }
  t.equal((await call(test.app, 'GET', '/whoami', { token: user.token })).status, 200, 'the session still works');
  t.equal((await login(test, user.email, user.password)).status, 200, 'the password is unchanged');
  const missing = await change(test, user.token, { current_password: user.password });
  t.equal(missing.statusCode, 422);
  t.match(missing.json().message, /^new_password/);
  t.equal(
    (await change(test, user.token, { current_password: user.password, new_password: NEW_PASSWORD, email: 'x@y.test' })).statusCode,
    400,
    'unexpected field',
  );
});

t.test('API keys and mailbox sessions get 403; no credential 401', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const { key } = await createKey(test.app, user);
  const byKey = await change(test, key, { current_password: user.password, new_password: NEW_PASSWORD });
  t.equal(byKey.statusCode, 403);
  t.equal(byKey.json().error, 'forbidden');

  const domain = await verifiedMailDomain(test.sql, user.tenantId);
  const box = await createTestMailbox(test.app, user.token, user.tenantId, `inbox@${domain}`);
  const mailbox = await mailboxSession(test.app, user.token, box.id);
  const byMailbox = await change(test, mailbox, { current_password: 'Mailbox-pass-42', new_password: NEW_PASSWORD });
  t.equal(byMailbox.statusCode, 403);

  const anonymous = await test.app.inject({
    method: 'POST',
    url: '/api/v1/auth/password',
    payload: { current_password: user.password, new_password: NEW_PASSWORD },
  });
  t.equal(anonymous.statusCode, 401);
  t.equal((await login(test, user.email, user.password)).status, 200, 'nothing changed');
});

t.test('any role may change its own password', async (t) => {
  const test = await appAt(t);
  const owner = await registerTenant(test.app);
  const viewer = await addMember(test.app, owner, 'viewer');
  test.clock.advance(10);
  const res = await change(test, viewer.token, { current_password: MEMBER_PASSWORD, new_password: NEW_PASSWORD });
  t.equal(res.statusCode, 200);
  t.equal((await login(test, viewer.email, NEW_PASSWORD)).status, 200);
});

t.test('the route is described in the OpenAPI document', async (t) => {
  const test = await appAt(t);
  const doc = (await test.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  const op = doc.paths['/auth/password']?.post;
  t.ok(op, 'documented');
  t.match(op.description, /current_password/);
  t.match(op.description, /API keys get 403/);
  t.same(Object.keys(op.requestBody.content['application/json'].schema.properties).sort(), ['current_password', 'new_password']);
  t.notOk(
    Object.keys(doc.paths).some((p) => /reset-password$|accept-invite$/.test(p) && !p.startsWith('/auth/')),
    'the HTML pages are not API routes',
  );
});
