// TOTP two-factor sign-in through the API: enrolment, verification, the login challenge, replays, recovery codes, disabling.
import t from 'tap';
import { generate } from 'otplib';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { openTotpSecret, qrCodeDataUrl } from '../../../shared/accounts/auth/totp.js';
import { buildTestApp, call, createKey, registerTenant, type TestApp, type TestLike, type TestTenant } from '../../helpers/app.js';

const STEP_MS = 30_000;

/** An app on a hand-moved clock that starts 5 s into a TOTP step, so a test knows which step every code is of. */
async function appAt(t: TestLike): Promise<TestApp & { clock: ManualClock }> {
  const clock = new ManualClock(new Date(Math.floor(Date.now() / STEP_MS) * STEP_MS + 5_000));
  return { ...(await buildTestApp(t, { clock })), clock };
}

/** The code of the step `offset` steps away from the clock's. */
const codeAt = (secret: string, clock: ManualClock, offset = 0) => generate({ secret, epoch: Math.floor((clock.now().getTime() + offset * STEP_MS) / 1000) });

async function enable(test: TestApp & { clock: ManualClock }, user: TestTenant): Promise<{ secret: string; codes: string[] }> {
  const enrolled = await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token });
  const secret = enrolled.body.data.secret as string;
  const verified = await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: await codeAt(secret, test.clock) } });
  if (verified.status !== 200) throw new Error(`verify failed: ${verified.status} ${JSON.stringify(verified.body)}`);
  return { secret, codes: verified.body.data.recovery_codes };
}

async function challengeToken(app: TestApp['app'], user: TestTenant): Promise<string> {
  const res = await call(app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } });
  if (res.status !== 200 || !res.body.data.requires_totp) throw new Error(`expected a TOTP challenge: ${JSON.stringify(res.body)}`);
  return res.body.data.totp_session_token;
}

t.test('enrolment returns a sealed secret, its otpauth URL and a PNG QR code of it, without enabling', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const res = await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token });
  t.equal(res.status, 200);
  const { secret, otpauth_url, qr_code_dataurl } = res.body.data;
  t.match(secret, /^[A-Z2-7]{32}$/, '160-bit base32 secret');
  const url = new URL(otpauth_url);
  t.equal(url.protocol, 'otpauth:');
  t.equal(url.host, 'totp');
  t.equal(decodeURIComponent(url.pathname), `/Mailpath:${user.email}`, 'label is issuer:email');
  t.equal(url.searchParams.get('secret'), secret);
  t.equal(url.searchParams.get('issuer'), 'Mailpath');

  t.match(qr_code_dataurl, /^data:image\/png;base64,/);
  const png = Buffer.from(qr_code_dataurl.slice('data:image/png;base64,'.length), 'base64');
  t.same([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  t.equal(png.subarray(12, 16).toString('latin1'), 'IHDR');
  t.ok(png.readUInt32BE(16) >= 100, 'a scannable size');
  t.equal(qr_code_dataurl, await qrCodeDataUrl(otpauth_url), 'the QR code encodes exactly the otpauth URL');

  const [row] = await test.sql`select secret_sealed, enabled_at from user_totp where user_id = ${user.userId}`;
  t.equal(row!.enabled_at, null, 'pending, not enabled');
  t.notOk(Buffer.from(row!.secret_sealed).includes(Buffer.from(secret)), 'the secret is not stored in plaintext');
  t.equal(openTotpSecret(test.ctx.vault, user.userId, row!.secret_sealed), secret, 'it opens with the master key');

  const status = await call(test.app, 'GET', '/auth/2fa/status', { token: user.token });
  t.same(status.body.data, { enabled: false, enabled_at: null, recovery_codes_remaining: 0 });
  const login = await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } });
  t.ok(login.body.data.token, 'login still gives a session while only pending');
});

t.test('verify: wrong and malformed codes, a replaced pending secret, then 8 hashed recovery codes and an audit row', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const none = await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: '123456' } });
  t.equal(none.status, 409, 'nothing pending');

  const first = (await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token })).body.data.secret;
  const second = (await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token })).body.data.secret;
  t.not(first, second);
  const stale = await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: await codeAt(first, test.clock) } });
  t.equal(stale.status, 401, 'a code of the replaced secret is refused');
  t.equal(stale.body.error, 'unauthenticated');
  const wrong = await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: await codeAt(second, test.clock, 3) } });
  t.equal(wrong.status, 401, 'a code three steps ahead is outside the window');
  const malformed = await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: '12a456' } });
  t.equal(malformed.status, 422);
  t.match(malformed.body.message, /^code/);

  const ok = await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: await codeAt(second, test.clock) } });
  t.equal(ok.status, 200);
  t.equal(ok.body.data.enabled_at, test.clock.now().toISOString());
  const codes: string[] = ok.body.data.recovery_codes;
  t.equal(codes.length, 8);
  t.equal(new Set(codes).size, 8, 'all different');
  for (const c of codes) t.match(c, /^[a-z2-9]{5}-[a-z2-9]{5}$/);
  const stored = await test.sql<{ code_hash: string }[]>`select code_hash from user_recovery_codes where user_id = ${user.userId}`;
  t.equal(stored.length, 8);
  for (const s of stored) t.match(s.code_hash, /^\$2[aby]\$04\$/, 'bcrypt at the configured cost');
  t.notOk(
    stored.some((s) => codes.some((c) => s.code_hash.includes(c.replace('-', '')))),
    'no plaintext stored',
  );

  const status = await call(test.app, 'GET', '/auth/2fa/status', { token: user.token });
  t.same(status.body.data, { enabled: true, enabled_at: ok.body.data.enabled_at, recovery_codes_remaining: 8 });
  const audit = await test.sql`select actor_id, metadata from audit_events where action = 'auth.2fa_enabled'`;
  t.equal(audit.length, 1);
  t.equal(audit[0]!.actor_id, user.userId);

  const again = await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token });
  t.equal(again.status, 409, 'enrolling while enabled is a conflict');
  t.equal(again.body.error, 'conflict');
  const reverify = await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: await codeAt(second, test.clock, 1) } });
  t.equal(reverify.status, 409);
});

t.test('login asks for the code; the challenge token is no session; a code works once, and never an earlier one', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const { secret } = await enable(test, user);

  const login = await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } });
  t.equal(login.status, 200);
  t.same(Object.keys(login.body.data).sort(), ['requires_totp', 'totp_session_token']);
  t.equal(login.body.data.requires_totp, true);
  const pending = login.body.data.totp_session_token;

  for (const [method, url] of [
    ['GET', '/whoami'],
    ['GET', '/auth/2fa/status'],
    ['GET', '/api-keys'],
    ['POST', '/auth/2fa/enroll'],
  ] as const) {
    const res = await call(test.app, method, url, { token: pending });
    t.equal(res.status, 401, `the challenge token is refused as a bearer on ${method} ${url}`);
  }

  const reused = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: await codeAt(secret, test.clock) } });
  t.equal(reused.status, 401, 'the step the enrolment used cannot sign in');
  const wrong = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: '000000' } });
  t.equal(wrong.status, 401);
  t.equal(wrong.body.error, 'unauthenticated');

  const nextCode = await codeAt(secret, test.clock, 1);
  const ok = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: nextCode } });
  t.equal(ok.status, 200, 'the next step (clock drift) is within the window');
  t.match(ok.body.data, { token: String, user_id: user.userId, tenant_id: user.tenantId, expires_at: Number });
  t.equal((await call(test.app, 'GET', '/whoami', { token: ok.body.data.token })).status, 200, 'a full session');

  const replay = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: nextCode } });
  t.equal(replay.status, 401, 'the same code again is a replay');
  const earlier = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: await codeAt(secret, test.clock, -1) } });
  t.equal(earlier.status, 401, 'a code of an earlier step than the last used is refused');

  test.clock.advance(STEP_MS);
  const stillReplay = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: nextCode } });
  t.equal(stillReplay.status, 401, 'still refused once its step is the current one');
  const later = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: await codeAt(secret, test.clock, 1) } });
  t.equal(later.status, 200, 'a later step signs in');
});

t.test('challenge tokens: expired, tampered, a session instead, another user', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const other = await registerTenant(test.app);
  const { secret } = await enable(test, user);
  const otherSecret = (await enable(test, other)).secret;
  const pending = await challengeToken(test.app, user);

  const tampered = await call(test.app, 'POST', '/auth/2fa/challenge', {
    body: { totp_session_token: `${pending.slice(0, -4)}AAAA`, code: await codeAt(secret, test.clock, 1) },
  });
  t.equal(tampered.status, 401);
  const session = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: user.token, code: await codeAt(secret, test.clock, 1) } });
  t.equal(session.status, 401, 'a session JWT is not a challenge token');
  const crossed = await call(test.app, 'POST', '/auth/2fa/challenge', {
    body: { totp_session_token: pending, code: await codeAt(otherSecret, test.clock, 1) },
  });
  t.equal(crossed.status, 401, "another user's code does not open this user's challenge");

  test.clock.advance(301_000);
  const expired = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: await codeAt(secret, test.clock) } });
  t.equal(expired.status, 401, 'the challenge token expires after 5 minutes');
  t.match(expired.body.message, /totp_session_token/);

  const otherStatus = await call(test.app, 'GET', '/auth/2fa/status', { token: other.token });
  t.equal(otherStatus.body.data.enabled, true, "each user's enrolment is their own");
});

t.test('recovery codes: each works once, two concurrent uses of one code let one through', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const { codes } = await enable(test, user);

  const pending = await challengeToken(test.app, user);
  const typed = ` ${codes[0]!.toUpperCase().replace('-', ' - ')} `;
  const ok = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: typed } });
  t.equal(ok.status, 200, 'case, spaces and hyphens as typed do not matter');
  t.equal((await call(test.app, 'GET', '/whoami', { token: ok.body.data.token })).status, 200);
  const again = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: codes[0] } });
  t.equal(again.status, 401, 'a used recovery code never works again');
  const bogus = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: 'aaaaa-bbbbb' } });
  t.equal(bogus.status, 401);

  const audit = await test.sql`select actor_id, metadata from audit_events where action = 'auth.recovery_code_used'`;
  t.equal(audit.length, 1);
  t.same(audit[0]!.metadata, { remaining: 7 });
  t.equal((await call(test.app, 'GET', '/auth/2fa/status', { token: user.token })).body.data.recovery_codes_remaining, 7);

  const race = await Promise.all([1, 2, 3].map(() => call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: codes[1] } })));
  t.same(race.map((r) => r.status).sort(), [200, 401, 401], 'exactly one concurrent use wins');
  const [left] = await test.sql<{ n: number }[]>`select count(*)::int as n from user_recovery_codes where user_id = ${user.userId} and used_at is null`;
  t.equal(left!.n, 6);
});

t.test('disable needs the password, removes the secret and codes, and login gives a session again', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  await enable(test, user);

  const wrong = await call(test.app, 'POST', '/auth/2fa/disable', { token: user.token, body: { password: 'Not-the-password-1' } });
  t.equal(wrong.status, 401);
  t.equal(wrong.body.error, 'unauthenticated');
  t.equal((await call(test.app, 'GET', '/auth/2fa/status', { token: user.token })).body.data.enabled, true, 'still on');
  const missing = await call(test.app, 'POST', '/auth/2fa/disable', { token: user.token, body: {} });
  t.equal(missing.status, 422);

  const ok = await call(test.app, 'POST', '/auth/2fa/disable', { token: user.token, body: { password: user.password } });
  t.equal(ok.status, 200);
  t.same(ok.body.data, { status: 'disabled' });
  t.equal((await test.sql`select 1 from user_totp where user_id = ${user.userId}`).length, 0);
  t.equal((await test.sql`select 1 from user_recovery_codes where user_id = ${user.userId}`).length, 0);
  t.equal((await test.sql`select 1 from audit_events where action = 'auth.2fa_disabled' and actor_id = ${user.userId}`).length, 1);
  const status = await call(test.app, 'GET', '/auth/2fa/status', { token: user.token });
  t.same(status.body.data, { enabled: false, enabled_at: null, recovery_codes_remaining: 0 });

  const login = await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } });
  t.ok(login.body.data.token, 'a session straight away');
  const twice = await call(test.app, 'POST', '/auth/2fa/disable', { token: user.token, body: { password: user.password } });
  t.equal(twice.status, 200, 'disabling when off answers the same');
  t.equal((await test.sql`select 1 from audit_events where action = 'auth.2fa_disabled'`).length, 1, 'and audits nothing');
});

t.test('a challenge token issued before 2FA was disabled no longer works', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const { secret } = await enable(test, user);
  const pending = await challengeToken(test.app, user);
  await call(test.app, 'POST', '/auth/2fa/disable', { token: user.token, body: { password: user.password } });
  const res = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: await codeAt(secret, test.clock, 1) } });
  t.equal(res.status, 401);
});

t.test('API keys and missing credentials cannot use the 2FA management routes; bad bodies are refused', async (t) => {
  const test = await appAt(t);
  const user = await registerTenant(test.app);
  const key = await createKey(test.app, user);
  const routes = [
    ['POST', '/auth/2fa/enroll', undefined],
    ['POST', '/auth/2fa/verify', { code: '123456' }],
    ['GET', '/auth/2fa/status', undefined],
    ['POST', '/auth/2fa/disable', { password: user.password }],
  ] as const;
  for (const [method, url, body] of routes) {
    const withKey = await call(test.app, method, url, { token: key.key, ...(body ? { body } : {}) });
    t.equal(withKey.status, 403, `${method} ${url} with an API key`);
    t.equal(withKey.body.error, 'forbidden');
    const anonymous = await call(test.app, method, url, body ? { body } : {});
    t.equal(anonymous.status, 401, `${method} ${url} without a credential`);
  }
  t.equal((await test.sql`select 1 from user_totp`).length, 0, 'nothing was enrolled');

  const extra = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: 'x', code: '123456', remember: true } });
  t.equal(extra.status, 400, 'unexpected field');
  const missing = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { code: '123456' } });
  t.equal(missing.status, 422);
  t.match(missing.body.message, /^totp_session_token/);
  const enrollBody = await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token, body: { secret: 'MINE' } });
  t.equal(enrollBody.status, 400, 'enroll takes no body');
});
