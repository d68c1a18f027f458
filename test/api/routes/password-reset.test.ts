// Password reset through the API: the same answer for every address, the e-mail (sent through the outbound path or logged), single-use tokens, sessions ended.
import { Writable } from 'node:stream';
import t from 'tap';
import { simpleParser } from 'mailparser';
import { generate } from 'otplib';
import { ManualClock } from '../../../shared/kernel/clock.js';
import type { Env } from '../../../shared/config/index.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { buildTestApp, call, registerTenant, type TestApp, type TestLike, type TestTenant } from '../../helpers/app.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { systemMailText } from '../../helpers/system-mail.js';

const MIN_MS = 100;
const NEW_PASSWORD = 'Brand-new-secret-77';

interface ResetApp extends TestApp {
  clock: ManualClock;
  /** Parsed JSON log lines so far. */
  logs(): Record<string, any>[];
}

async function resetApp(t: TestLike, env: Env = {}): Promise<ResetApp> {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  const app = await buildTestApp(t, {
    clock,
    log: createLogger('info', stream),
    env: { MAILPATH_CONFIG__AUTH__PASSWORD_RESET__MIN_RESPONSE_MS: String(MIN_MS), ...env },
  });
  const logs = () =>
    lines
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, any>);
  return { ...app, clock, logs };
}

/** Requests a reset and returns the token from the logged e-mail (no system sender configured). */
async function requestToken(test: ResetApp, email: string): Promise<string> {
  const before = test.logs().length;
  const res = await call(test.app, 'POST', '/auth/password-reset/request', { body: { email } });
  if (res.status !== 200) throw new Error(`request failed: ${res.status}`);
  await test.ctx.systemMail.drain();
  const mail = test
    .logs()
    .slice(before)
    .find((l) => l['system_mail']);
  const token = /token=([A-Za-z0-9_-]{43})/.exec(systemMailText(mail))?.[1];
  if (!token) throw new Error('no reset e-mail was logged');
  return token;
}

const confirm = (test: TestApp, token: string, newPassword = NEW_PASSWORD) =>
  call(test.app, 'POST', '/auth/password-reset/confirm', { body: { token, new_password: newPassword } });

t.test('the answer is the same, and never quicker than the floor, for known and unknown addresses; only a known one gets a token', async (t) => {
  const test = await resetApp(t);
  const user = await registerTenant(test.app);
  const answers = [];
  for (const email of [user.email, 'nobody@example.test', user.email.toUpperCase()]) {
    const started = performance.now();
    const res = await call(test.app, 'POST', '/auth/password-reset/request', { body: { email } });
    t.ok(performance.now() - started >= MIN_MS - 5, `${email} waited for min_response_ms`);
    answers.push({ status: res.status, body: res.body });
  }
  t.same(answers[0], { status: 200, body: { ok: true, data: { status: 'ok' } } });
  t.same(answers[1], answers[0], 'unknown address: same answer');
  t.same(answers[2], answers[0]);
  await test.ctx.systemMail.drain();
  const rows = await test.sql<{ user_id: string; token_hash: string }[]>`select user_id, token_hash from password_reset_tokens`;
  t.equal(rows.length, 2, 'one token per request of the known address (case does not matter)');
  t.ok(rows.every((r) => r.user_id === user.userId));
  const mails = test.logs().filter((l) => l['system_mail']);
  t.equal(mails.length, 2, 'no sender configured: each e-mail goes to the outbox, named in the log');
  const token = /token=([A-Za-z0-9_-]{43})/.exec(systemMailText(mails[0]))![1]!;
  t.match(systemMailText(mails[0]), `https://localhost:8443/app/reset-password?token=${token}`, 'the outbox file carries the link');
  t.notOk(JSON.stringify(test.logs()).includes(token), 'the log does not');
  t.equal(mails[0]!['level'], 30, 'at info level');
  t.notOk(
    rows.some((r) => r.token_hash.includes(token)),
    'only the hash of the token is stored',
  );
  t.equal((await test.sql`select 1 from sends`).length, 0, 'nothing sent');
  t.equal((await test.sql`select 1 from audit_events where action = 'auth.password_reset_requested'`).length, 2);
});

t.test('confirm sets the password, ends earlier sessions and 2FA challenges, and spends every outstanding token', async (t) => {
  const test = await resetApp(t);
  const user = await registerTenant(test.app);
  // 2FA on, and a challenge pending from before the reset.
  const secret = (await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token })).body.data.secret;
  const codeAt = (offset: number) => generate({ secret, epoch: Math.floor(test.clock.now().getTime() / 1000) + offset * 30 });
  await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: await codeAt(0) } });
  const pending = (await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } })).body.data.totp_session_token;

  const first = await requestToken(test, user.email);
  const second = await requestToken(test, user.email);
  test.clock.advance(2_000);
  const weak = await confirm(test, first, 'short');
  t.equal(weak.status, 422, 'a weak password is refused as at registration');
  t.match(weak.body.message, /^new_password/);
  const res = await confirm(test, first);
  t.equal(res.status, 200, 'the token still works after the weak attempt');
  t.same(res.body.data, { status: 'password_changed' });

  t.equal((await call(test.app, 'GET', '/whoami', { token: user.token })).status, 401, 'a session issued before the reset is refused');
  const challenge = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: await codeAt(1) } });
  t.equal(challenge.status, 401, 'so is a 2FA challenge started before it');
  const oldLogin = await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } });
  t.equal(oldLogin.status, 401, 'the old password is gone');
  const newLogin = await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: NEW_PASSWORD } });
  t.equal(newLogin.body.data.requires_totp, true, 'the new password signs in, and 2FA stays on');
  const done = await call(test.app, 'POST', '/auth/2fa/challenge', {
    body: { totp_session_token: newLogin.body.data.totp_session_token, code: await codeAt(1) },
  });
  t.equal((await call(test.app, 'GET', '/whoami', { token: done.body.data.token })).status, 200, 'new sessions work');

  for (const [what, token] of [
    ['the used token', first],
    ['another token mailed before', second],
  ] as const) {
    const again = await confirm(test, token, 'Another-secret-88');
    t.equal(again.status, 400, `${what} is refused`);
    t.equal(again.body.error, 'bad_request');
    t.match(again.body.message, /^token/);
  }
  const audit = await test.sql`select actor_id from audit_events where action = 'auth.password_reset_completed'`;
  t.same(
    audit.map((a) => a['actor_id']),
    [user.userId],
  );
});

t.test('sessions and 2FA challenges issued earlier in the same second as the reset end too; a session right after it works', async (t) => {
  const test = await resetApp(t);
  const user = await registerTenant(test.app);
  const secret = (await call(test.app, 'POST', '/auth/2fa/enroll', { token: user.token })).body.data.secret;
  const codeAt = (offset: number) => generate({ secret, epoch: Math.floor(test.clock.now().getTime() / 1000) + offset * 30 });
  await call(test.app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: await codeAt(0) } });
  const token = await requestToken(test, user.email);
  test.clock.advance(300);
  const pending = (await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } })).body.data.totp_session_token;
  test.clock.advance(300);
  t.equal((await confirm(test, token)).status, 200, 'the reset, 600 ms into the second the session and the challenge were issued in');

  t.equal((await call(test.app, 'GET', '/whoami', { token: user.token })).status, 401, 'the earlier session is refused');
  const stale = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: pending, code: await codeAt(1) } });
  t.equal(stale.status, 401, 'so is the earlier challenge');
  const login = await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: NEW_PASSWORD } });
  const done = await call(test.app, 'POST', '/auth/2fa/challenge', { body: { totp_session_token: login.body.data.totp_session_token, code: await codeAt(1) } });
  t.equal(done.status, 200, 'a challenge issued at the reset instant works');
  t.equal((await call(test.app, 'GET', '/whoami', { token: done.body.data.token })).status, 200, 'and so does its session');
});

t.test('expired, unknown and malformed tokens; bad bodies', async (t) => {
  const test = await resetApp(t);
  const user = await registerTenant(test.app);
  const token = await requestToken(test, user.email);
  test.clock.advance(3_601_000);
  const expired = await confirm(test, token);
  t.equal(expired.status, 400, 'an hour later the token has expired');
  t.equal((await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } })).status, 200, 'password unchanged');

  t.equal((await confirm(test, 'A'.repeat(43))).status, 400, 'unknown token');
  t.equal(
    (await call(test.app, 'POST', '/auth/password-reset/confirm', { body: { token: 'x', new_password: NEW_PASSWORD, email: user.email } })).status,
    400,
    'unexpected field',
  );
  const missing = await call(test.app, 'POST', '/auth/password-reset/confirm', { body: { new_password: NEW_PASSWORD } });
  t.equal(missing.status, 422);
  t.match(missing.body.message, /^token/);
  t.equal((await call(test.app, 'POST', '/auth/password-reset/request', { body: {} })).status, 422);
  t.equal((await call(test.app, 'POST', '/auth/password-reset/request', { body: { email: user.email, tenant: 'x' } })).status, 400);
});

t.test('two requests with one token race: exactly one changes the password', async (t) => {
  const test = await resetApp(t);
  const user = await registerTenant(test.app);
  const token = await requestToken(test, user.email);
  const results = await Promise.all([confirm(test, token, 'Racer-one-secret-1'), confirm(test, token, 'Racer-two-secret-2')]);
  t.same(results.map((r) => r.status).sort(), [200, 400]);
});

t.test('at most max_emails_per_hour reset e-mails per account per hour', async (t) => {
  const test = await resetApp(t, { MAILPATH_CONFIG__AUTH__PASSWORD_RESET__MAX_EMAILS_PER_HOUR: '2' });
  const user = await registerTenant(test.app);
  for (let i = 0; i < 4; i++) t.equal((await call(test.app, 'POST', '/auth/password-reset/request', { body: { email: user.email } })).status, 200);
  await test.ctx.systemMail.drain();
  t.equal(test.logs().filter((l) => l['system_mail']).length, 2, 'two e-mails, the rest answered the same but not sent');
  test.clock.advance(3_601_000);
  await requestToken(test, user.email);
  t.pass('an hour later another one goes out');
});

/** Sets the super-admin tenant up to send from `sender`'s domain. */
async function platformDomain(test: TestApp, domain: string): Promise<string> {
  const [tenant] = await test.sql<{ id: string }[]>`select id from tenants where is_super_admin`;
  await verifiedSendingDomain(test.sql, test.ctx.vault, tenant!.id, domain);
  return tenant!.id;
}

t.test('with a system sender at a verified platform domain, the e-mail is a real send through the outbound path', async (t) => {
  const test = await resetApp(t, { MAILPATH_SYSTEM_SENDER: 'No-Reply@Platform-Mail.test' });
  const platformId = await platformDomain(test, 'platform-mail.test');
  const user: TestTenant = await registerTenant(test.app);
  t.equal((await call(test.app, 'POST', '/auth/password-reset/request', { body: { email: user.email } })).status, 200);
  await test.ctx.systemMail.drain();

  const sends = await test.sql<
    { id: string; tenant_id: string; from_email: string; to_email: string; status: string; message: Buffer; api_key_id: string | null }[]
  >`
    select id, tenant_id, from_email, to_email, status, message, api_key_id from sends`;
  t.equal(sends.length, 1);
  const send = sends[0]!;
  t.match(send, { tenant_id: platformId, from_email: 'no-reply@platform-mail.test', to_email: user.email, status: 'queued', api_key_id: null });
  const parsed = await simpleParser(send.message);
  t.equal(parsed.subject, 'Reset your Mailpath password');
  t.same(parsed.from?.value, [{ name: 'Mailpath', address: 'no-reply@platform-mail.test' }]);
  t.ok(parsed.headers.get('dkim-signature'), 'DKIM-signed like any send');
  const token = /https:\/\/localhost:8443\/app\/reset-password\?token=([A-Za-z0-9_-]{43})/.exec(parsed.text ?? '')?.[1];
  t.ok(token, 'the body carries the link');
  t.notOk(
    test.logs().some((l) => l['system_mail']),
    'not logged instead',
  );

  const admin = await call(test.app, 'POST', '/auth/login', { body: { email: 'root@mailpath.test', password: 'Root-password-123' } });
  const listed = await call(test.app, 'GET', `/sends/${send.id}`, { token: admin.body.data.token });
  t.equal(listed.status, 200, "visible in the super-admin tenant's outbound log");

  t.equal((await confirm(test, token!)).status, 200, 'the mailed token resets the password');
});

t.test('a system sender whose domain is not verified: logged, and the API still answers 200', async (t) => {
  const test = await resetApp(t, { MAILPATH_SYSTEM_SENDER: 'no-reply@unverified-platform.test' });
  const user = await registerTenant(test.app);
  const res = await call(test.app, 'POST', '/auth/password-reset/request', { body: { email: user.email } });
  t.equal(res.status, 200);
  await test.ctx.systemMail.drain();
  const mail = test.logs().find((l) => l['system_mail']);
  t.match(mail, { reason: /unverified-platform\.test is not a verified sending domain/ });
  t.equal((await test.sql`select 1 from sends`).length, 0);
});
