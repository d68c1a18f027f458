// The /reset-password page the reset e-mail links to: the form and its headers, the reset through it, its refusals, escaping, rate limit, and no token in
// the log.
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import t, { type Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import { ManualClock } from '../../../shared/kernel/clock.js';
import type { Env } from '../../../shared/config/index.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { buildTestApp, call, registerTenant, type TestApp, type TestLike } from '../../helpers/app.js';
import { systemMailText } from '../../helpers/system-mail.js';

const NEW_PASSWORD = 'Page-chosen-secret-5';

interface PageApp extends TestApp {
  clock: ManualClock;
  logLines(): string[];
}

async function pageApp(t: TestLike, env: Env = {}): Promise<PageApp> {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const clock = new ManualClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  const app = await buildTestApp(t, { clock, log: createLogger('info', stream), env: { MAILPATH_CONFIG__AUTH__PASSWORD_RESET__MIN_RESPONSE_MS: '0', ...env } });
  return { ...app, clock, logLines: () => [...lines] };
}

/** Requests a reset e-mail and returns the token of its link (no system sender: the e-mail is logged). */
async function mailedToken(test: PageApp, email: string): Promise<string> {
  await call(test.app, 'POST', '/auth/password-reset/request', { body: { email } });
  await test.ctx.systemMail.drain();
  const mail = test
    .logLines()
    .reverse()
    .find((l) => l.includes('"system_mail"'));
  const token = /reset-password\?token=([A-Za-z0-9_-]{43})/.exec(systemMailText(mail ? JSON.parse(mail) : undefined))?.[1];
  if (!token) throw new Error('no reset e-mail was logged');
  return token;
}

const getPage = (app: FastifyInstance, query: string) => app.inject({ method: 'GET', url: `/reset-password${query}` });
const postPage = (app: FastifyInstance, fields: Record<string, string>, remoteAddress = '127.0.0.1') =>
  app.inject({
    method: 'POST',
    url: '/reset-password',
    remoteAddress,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
const submit = (app: FastifyInstance, token: string, password = NEW_PASSWORD, again = password) =>
  postPage(app, { token, new_password: password, new_password_again: again });

/** The headers every page answer carries, its inline style allowed by the CSP's hash. */
function checkHeaders(t: Test, res: Awaited<ReturnType<typeof getPage>>, what: string): void {
  const style = /<style>([^<]*)<\/style>/.exec(res.body)?.[1] ?? '';
  const hash = createHash('sha256').update(style, 'utf8').digest('base64');
  t.equal(
    res.headers['content-security-policy'],
    `default-src 'none'; style-src 'sha256-${hash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    `${what}: strict CSP`,
  );
  t.match(
    res.headers,
    {
      'content-type': 'text/html; charset=utf-8',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    },
    `${what}: headers`,
  );
  t.notMatch(res.body, /<script|https?:\/\//i, `${what}: no script, no outside resource`);
}

t.test('GET shows an accessible form carrying the token in a hidden field only; the headers are strict; no log line holds the token', async (t) => {
  const test = await pageApp(t);
  const user = await registerTenant(test.app);
  const token = await mailedToken(test, user.email);
  const before = test.logLines().length;
  const res = await getPage(test.app, `?token=${token}`);
  t.equal(res.statusCode, 200);
  checkHeaders(t, res, 'GET');
  t.match(res.body, /^<!doctype html>\n<html lang="en">/);
  t.match(res.body, /<title>Choose a new password – Mailpath<\/title>/);
  t.match(res.body, /<h1>Choose a new password<\/h1>/);
  t.match(res.body, '<form method="post" action="reset-password">', 'posts to the page path, without the token in the URL');
  t.match(res.body, `<input type="hidden" name="token" value="${token}">`);
  t.equal(res.body.split(token).length, 2, 'the token appears once, in the hidden field');
  t.match(
    res.body,
    /<label for="new_password">New password<\/label>\n<input id="new_password" name="new_password" type="password" autocomplete="new-password" required minlength="10"/,
  );
  t.match(res.body, /<label for="new_password_again">/);
  t.match(res.body, /<button type="submit">/);

  const lines = test.logLines().slice(before);
  const logged = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'api request');
  t.equal(logged?.method, 'GET', 'the request is logged');
  t.equal(logged?.url, '/reset-password?token=[redacted]', 'its URL with the token redacted');
  t.notOk(
    lines.some((l) => l.includes(token)),
    'no log line of the page request holds the token',
  );

  t.equal((await test.app.inject({ method: 'HEAD', url: `/reset-password?token=${token}` })).statusCode, 200, 'HEAD answers too');
});

t.test('POST with a mailed token sets the password: the new one signs in, earlier sessions end, the token is spent', async (t) => {
  const test = await pageApp(t);
  const user = await registerTenant(test.app);
  const token = await mailedToken(test, user.email);
  test.clock.advance(1_000);
  const before = test.logLines().length;
  const res = await submit(test.app, token);
  t.equal(res.statusCode, 200);
  checkHeaders(t, res, 'POST');
  t.match(res.body, /<h1>Password changed<\/h1>/);
  t.match(res.body, /role="status"/);
  t.notOk(res.body.includes(token), 'the token is not echoed');
  t.notOk(
    test
      .logLines()
      .slice(before)
      .some((l) => l.includes(token) || l.includes(NEW_PASSWORD)),
    'neither token nor password logged',
  );

  t.equal((await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: NEW_PASSWORD } })).status, 200, 'the new password signs in');
  t.equal((await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } })).status, 401, 'the old one does not');
  t.equal((await call(test.app, 'GET', '/whoami', { token: user.token })).status, 401, 'an earlier session has ended');
  t.equal((await test.sql`select 1 from audit_events where action = 'auth.password_reset_completed'`).length, 1, 'audited like the JSON endpoint');

  const again = await submit(test.app, token, 'Another-secret-66');
  t.equal(again.statusCode, 400, 'a used token');
  checkHeaders(t, again, 'used token');
  t.match(again.body, /<h1>This link does not work any more<\/h1>/);
  t.match(again.body, /role="alert"/);
  t.notMatch(again.body, /<form/, 'nothing to post again');
});

t.test('a weak or mistyped password shows the form again with the problem, and the token still works', async (t) => {
  const test = await pageApp(t);
  const user = await registerTenant(test.app);
  const token = await mailedToken(test, user.email);

  const weak = await submit(test.app, token, 'short1A');
  t.equal(weak.statusCode, 422);
  checkHeaders(t, weak, 'weak');
  t.match(weak.body, /<div class="problem" role="alert" id="problem">/);
  t.match(weak.body, 'The password must be at least 10 characters.', "the domain's message, as a sentence");
  t.match(weak.body, `<input type="hidden" name="token" value="${token}">`, 'the token is kept for the next try');
  t.match(weak.body, 'aria-describedby="problem password-rules" aria-invalid="true"', 'the input points at the problem');

  const common = await submit(test.app, token, 'Password1234');
  t.equal(common.statusCode, 422);
  t.match(common.body, 'The password is a commonly used password.');

  const mistyped = await submit(test.app, token, NEW_PASSWORD, `${NEW_PASSWORD}x`);
  t.equal(mistyped.statusCode, 422);
  t.match(mistyped.body, 'The two passwords differ');
  const empty = await postPage(test.app, { token });
  t.equal(empty.statusCode, 422);
  t.match(empty.body, 'Type a password.');

  t.equal((await call(test.app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } })).status, 200, 'the password is unchanged');
  t.equal((await submit(test.app, token)).statusCode, 200, 'the same token then works');
});

t.test('broken, unknown and expired links; what cannot be read; hostile input is escaped', async (t) => {
  const test = await pageApp(t);
  const user = await registerTenant(test.app);

  for (const query of ['', '?token=', `?token=${'a'.repeat(201)}`, '?token=a&token=b', '?token=%00abc']) {
    const res = await getPage(test.app, query);
    t.equal(res.statusCode, 400, `GET ${query.slice(0, 20) || '(no query)'}: a broken link`);
    t.match(res.body, 'This link is incomplete or damaged');
    t.notMatch(res.body, /<form/);
  }
  t.equal((await postPage(test.app, { new_password: NEW_PASSWORD, new_password_again: NEW_PASSWORD })).statusCode, 400, 'POST without a token');

  const unknown = await submit(test.app, 'A'.repeat(43));
  t.equal(unknown.statusCode, 400, 'an unknown token');
  t.match(unknown.body, 'This link does not work any more');

  const token = await mailedToken(test, user.email);
  test.clock.advance(3_601_000);
  const expired = await submit(test.app, token);
  t.equal(expired.statusCode, 400, 'an expired token');
  t.match(expired.body, /expired \(links work for one hour\)/);

  const hostile = `"><script>alert(1)</script><a href='x'>&amp;`;
  const res = await getPage(test.app, `?token=${encodeURIComponent(hostile)}`);
  t.equal(res.statusCode, 200);
  t.match(res.body, 'value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;a href=&#39;x&#39;&gt;&amp;amp;"', 'escaped in the attribute');
  t.notMatch(res.body, /<script|<a /);
  const posted = await submit(test.app, hostile, NEW_PASSWORD, 'mistyped');
  t.equal(posted.statusCode, 422, 'a hostile token posted with a mistyped password: the form again');
  t.notMatch(posted.body, /<script|<a /);
  t.match(posted.body, 'value="&quot;&gt;&lt;script', 'escaped when the form is shown again');

  const json = await test.app.inject({ method: 'POST', url: '/reset-password', payload: { token, new_password: NEW_PASSWORD } });
  t.equal(json.statusCode, 415, 'the page reads forms only');
  checkHeaders(t, json, '415');
  t.match(json.body, /<h1>That did not work<\/h1>/);
  const big = await postPage(test.app, { token, new_password: 'x'.repeat(20_000) });
  t.equal(big.statusCode, 413, 'a body over the form limit');
  t.match(big.headers['content-type'], /^text\/html/);
});

t.test('page requests count against the public rate-limit bucket of the client address, with the JSON endpoints', async (t) => {
  const test = await pageApp(t, { MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: '3' });
  const ip = '10.20.30.40';
  t.equal(
    (
      await test.app.inject({
        method: 'POST',
        url: '/api/v1/auth/password-reset/confirm',
        remoteAddress: ip,
        payload: { token: 'x', new_password: NEW_PASSWORD },
      })
    ).statusCode,
    400,
  );
  t.equal((await test.app.inject({ method: 'GET', url: '/reset-password?token=x', remoteAddress: ip })).statusCode, 200);
  t.equal((await postPage(test.app, { token: 'x', new_password: 'a', new_password_again: 'b' }, ip)).statusCode, 422);
  const limited = await postPage(test.app, { token: 'x', new_password: 'a', new_password_again: 'b' }, ip);
  t.equal(limited.statusCode, 429, 'the fourth request of the minute from the address');
  checkHeaders(t, limited, '429');
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After');
  t.match(limited.body, /Too many attempts from your network\. Wait \d+ seconds?, then try again\./);
  t.equal(
    (await postPage(test.app, { token: 'x', new_password: 'a', new_password_again: 'b' }, '10.20.30.41')).statusCode,
    422,
    'another address has its own bucket',
  );
});

t.test('bad tokens posted through the page count towards the sign-in throttle of the address', async (t) => {
  const test = await pageApp(t, { MAILPATH_CONFIG__AUTH__LOGIN_PROTECTION__MAX_FAILURES_PER_ADDRESS: '2' });
  const user = await registerTenant(test.app);
  const token = await mailedToken(test, user.email);
  for (let i = 0; i < 2; i++) t.equal((await submit(test.app, `guess-${i}`)).statusCode, 400);
  const locked = await submit(test.app, token);
  t.equal(locked.statusCode, 429, 'locked, even with the real token');
  t.equal(locked.headers['retry-after'], '30');
  t.match(locked.body, 'Too many attempts from your network. Wait 30 seconds, then try again.');
  t.match(locked.body, `value="${token}"`, 'the form stays, for after the wait');
  test.clock.advance(31_000);
  t.equal((await submit(test.app, token)).statusCode, 200);
});
