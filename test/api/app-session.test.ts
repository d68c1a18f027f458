// The dashboard's session: sign-in answers an HttpOnly cookie and a CSRF token (never the JWT), the cookie stands for the
// session JWT on every user route, writes without the token are refused and change nothing, and sign-out ends it.
import t from 'tap';
import { generate } from 'otplib';
import { buildTestApp, call, registerTenant, type TestTenant } from '../helpers/app.js';
import { assertForeign404 } from '../helpers/isolation.js';

const test = await buildTestApp(t);
const { app } = test;

/** The set-cookie headers of an answer, by cookie name, with their attributes. */
function setCookies(headers: Record<string, unknown>): Map<string, { value: string; attributes: string[] }> {
  const raw = headers['set-cookie'];
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [String(raw)];
  const out = new Map<string, { value: string; attributes: string[] }>();
  for (const line of list as string[]) {
    const [pair, ...attributes] = line.split(/;\s*/);
    const at = pair!.indexOf('=');
    out.set(pair!.slice(0, at), { value: decodeURIComponent(pair!.slice(at + 1)), attributes: attributes.map((a) => a.toLowerCase()) });
  }
  return out;
}

interface Browser {
  cookie: string;
  csrf: string;
}

async function signIn(user: TestTenant): Promise<Browser> {
  const res = await call(app, 'POST', '/auth/session', { body: { email: user.email, password: user.password } });
  if (res.status !== 200) throw new Error(`dashboard sign-in failed: ${res.status} ${JSON.stringify(res.body)}`);
  const cookies = setCookies(res.headers);
  const cookie = [...cookies].map(([name, c]) => `${name}=${c.value}`).join('; ');
  return { cookie, csrf: res.body.data.csrf_token };
}

t.test('sign-in sets the session as an HttpOnly, Secure, SameSite=Strict __Host- cookie and answers no JWT', async (t) => {
  const user = await registerTenant(app);
  const res = await call(app, 'POST', '/auth/session', { body: { email: user.email, password: user.password } });
  t.equal(res.status, 200);
  t.same(Object.keys(res.body.data).sort(), ['csrf_token', 'expires_at', 'tenant_id', 'user_id'], 'who and until when, and the CSRF token: nothing else');
  t.notOk(JSON.stringify(res.body).includes('eyJ'), 'no JWT anywhere in the body');
  const cookies = setCookies(res.headers);
  const session = cookies.get('__Host-mailpath_session');
  t.ok(session, 'the session cookie is set');
  t.match(session!.value, /^eyJ/, 'holding the session JWT');
  for (const attribute of ['httponly', 'secure', 'samesite=strict', 'path=/']) t.ok(session!.attributes.includes(attribute), `session cookie: ${attribute}`);
  t.notOk(
    session!.attributes.some((a) => a.startsWith('domain=')),
    'no Domain (a __Host- cookie must not have one)',
  );
  const maxAge = Number(session!.attributes.find((a) => a.startsWith('max-age='))?.slice(8));
  t.ok(Math.abs(maxAge - (res.body.data.expires_at - Math.floor(Date.now() / 1000))) <= 5, 'it expires with the JWT');
  const csrf = cookies.get('__Host-mailpath_csrf');
  t.ok(csrf?.attributes.includes('httponly'), 'the CSRF secret is an HttpOnly cookie too');
  t.not(res.body.data.csrf_token, csrf?.value, 'the token is not the secret');
});

t.test('the cookie signs reads in; writes need the CSRF token and change nothing without it', async (t) => {
  const user = await registerTenant(app);
  const browser = await signIn(user);
  const who = await call(app, 'GET', '/whoami', { headers: { cookie: browser.cookie } });
  t.equal(who.status, 200);
  t.equal(who.body.data.user.email, user.email, 'a read with the cookie alone is the user');

  const missing = await call(app, 'POST', '/api-keys', { headers: { cookie: browser.cookie }, body: { name: 'no token' } });
  t.equal(missing.status, 403);
  t.equal(missing.body.error, 'forbidden');
  t.match(missing.body.message, /x-csrf-token/);
  const wrong = await call(app, 'POST', '/api-keys', { headers: { cookie: browser.cookie, 'x-csrf-token': 'abc-def' }, body: { name: 'bad token' } });
  t.equal(wrong.status, 403, 'a made-up token is refused');
  const other = await signIn(await registerTenant(app));
  const foreign = await call(app, 'POST', '/api-keys', { headers: { cookie: browser.cookie, 'x-csrf-token': other.csrf }, body: { name: 'foreign token' } });
  t.equal(foreign.status, 403, "another browser's token is refused");
  const keys = await call(app, 'GET', '/api-keys', { token: user.token });
  t.equal(keys.body.data.items.length, 0, 'no key was created by a refused write');

  const made = await call(app, 'POST', '/api-keys', { headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf }, body: { name: 'dashboard key' } });
  t.equal(made.status, 201, 'with the token the write goes through');
  // The appender writes the audit row a moment later (jobs/audit): wait for it, bounded.
  let actors: { actor_type: string; actor_id: string }[] = [];
  for (let i = 0; i < 100 && actors.length === 0; i++) {
    actors = await test.sql`select actor_type, actor_id from audit_events where tenant_id = ${user.tenantId} and action = 'api_key.created'`;
    if (actors.length === 0) await new Promise((r) => setTimeout(r, 50));
  }
  t.same(actors, [{ actor_type: 'user', actor_id: user.userId }], 'and is audited as the user');
});

t.test('GET /auth/session gives a reloaded page a working token; 401 without a session', async (t) => {
  const user = await registerTenant(app);
  const browser = await signIn(user);
  const session = await call(app, 'GET', '/auth/session', { headers: { cookie: browser.cookie } });
  t.equal(session.status, 200);
  t.equal(session.body.data.user_id, user.userId);
  const write = await call(app, 'POST', '/api-keys', {
    headers: { cookie: browser.cookie, 'x-csrf-token': session.body.data.csrf_token },
    body: { name: 'k' },
  });
  t.equal(write.status, 201, 'the fresh token works');
  const none = await call(app, 'GET', '/auth/session');
  t.equal(none.status, 401);
  t.equal(none.body.error, 'unauthenticated');
});

t.test('only a user session counts as the cookie; a Bearer header never reads cookies', async (t) => {
  const user = await registerTenant(app);
  const browser = await signIn(user);
  const key = await call(app, 'POST', '/api-keys', { token: user.token, body: { name: 'k' } });
  const asCookie = await call(app, 'GET', '/whoami', { headers: { cookie: `__Host-mailpath_session=${key.body.data.key}` } });
  t.equal(asCookie.status, 401, 'an API key in the cookie is refused');
  const forged = await call(app, 'GET', '/whoami', { headers: { cookie: '__Host-mailpath_session=eyJhbGciOiJIUzI1NiJ9.e30.x' } });
  t.equal(forged.status, 401, 'a forged JWT is refused');
  const bearer = await call(app, 'GET', '/whoami', { headers: { cookie: browser.cookie, authorization: 'Bearer nonsense' } });
  t.equal(bearer.status, 401, 'a bad Authorization header is not rescued by a good cookie');
});

t.test("the cookie sees only its own tenant: another tenant's records are 404", async (t) => {
  const owner = await registerTenant(app);
  const key = await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'owner key' } });
  const browser = await signIn(await registerTenant(app));
  const requests = [
    { method: 'GET' as const, url: `/api-keys/${key.body.data.id}/activity` },
    { method: 'GET' as const, url: `/api-keys/${key.body.data.id}/rate-limit-status` },
  ];
  for (const r of requests) {
    const res = await call(app, r.method, r.url, { headers: { cookie: browser.cookie } });
    t.equal(res.status, 404, `${r.method} ${r.url} with another tenant's cookie is 404`);
    t.equal(res.body.error, 'not_found');
  }
  // The same requests with a Bearer session of that other tenant, through the shared helper.
  await assertForeign404(t, app, (await registerTenant(app)).token, requests);
});

t.test('two-factor sign-in: the challenge answers the cookie, and a recovery code works once', async (t) => {
  const user = await registerTenant(app);
  const enrolled = await call(app, 'POST', '/auth/2fa/enroll', { token: user.token });
  const secret = enrolled.body.data.secret as string;
  const verified = await call(app, 'POST', '/auth/2fa/verify', { token: user.token, body: { code: await generate({ secret }) } });
  const recovery = verified.body.data.recovery_codes[0] as string;

  const first = await call(app, 'POST', '/auth/session', { body: { email: user.email, password: user.password } });
  t.equal(first.body.data.requires_totp, true, 'the password alone signs nobody in');
  t.equal(setCookies(first.headers).size, 0, 'and sets no cookie');
  const done = await call(app, 'POST', '/auth/session/2fa', { body: { totp_session_token: first.body.data.totp_session_token, code: recovery } });
  t.equal(done.status, 200);
  t.ok(setCookies(done.headers).get('__Host-mailpath_session')?.value.startsWith('eyJ'), 'the recovery code signs in with the cookie');

  const again = await call(app, 'POST', '/auth/session', { body: { email: user.email, password: user.password } });
  const reused = await call(app, 'POST', '/auth/session/2fa', { body: { totp_session_token: again.body.data.totp_session_token, code: recovery } });
  t.equal(reused.status, 401, 'a used recovery code is refused');
  t.equal(setCookies(reused.headers).size, 0);
});

t.test('registration and invites answer the cookie too', async (t) => {
  const unique = Math.random().toString(36).slice(2, 8);
  const body = { tenant_name: 'Cookie Co', tenant_slug: `cookie-${unique}`, email: `c-${unique}@example.test`, password: 'Correct-horse-42' };
  const res = await call(app, 'POST', '/auth/session/register', { body });
  t.equal(res.status, 201);
  t.ok(res.body.data.csrf_token);
  const cookie = `__Host-mailpath_session=${setCookies(res.headers).get('__Host-mailpath_session')!.value}`;
  const who = await call(app, 'GET', '/whoami', { headers: { cookie } });
  t.equal(who.body.data.tenant.slug, body.tenant_slug);

  const owner = await registerTenant(app);
  const invite = await call(app, 'POST', '/team/invites', { token: owner.token, body: { email: `i-${unique}@example.test`, role: 'viewer' } });
  t.equal(invite.status, 201, JSON.stringify(invite.body));
  const token = new URL(invite.body.data.accept_url).searchParams.get('token');
  const accepted = await call(app, 'POST', '/auth/session/accept-invite', { body: { token, password: 'Another-horse-43' } });
  t.equal(accepted.status, 200);
  t.equal(accepted.body.data.tenant_id, owner.tenantId, 'the invite signs in to the inviting tenant');
});

t.test("a password change from the dashboard replaces this browser's session and ends the others", async (t) => {
  const user = await registerTenant(app);
  const browser = await signIn(user);
  const elsewhere = await signIn(user);
  const change = await call(app, 'POST', '/auth/session/password', {
    headers: { cookie: browser.cookie, 'x-csrf-token': browser.csrf },
    body: { current_password: user.password, new_password: 'Brand-new-horse-77' },
  });
  t.equal(change.status, 200);
  const renewed = setCookies(change.headers).get('__Host-mailpath_session')!.value;
  const csrf = browser.cookie.split('; ').find((c) => c.startsWith('__Host-mailpath_csrf='))!;
  t.equal((await call(app, 'GET', '/whoami', { headers: { cookie: `__Host-mailpath_session=${renewed}; ${csrf}` } })).status, 200, 'the new cookie works');
  t.equal((await call(app, 'GET', '/whoami', { headers: { cookie: elsewhere.cookie } })).status, 401, 'another browser is signed out');
  t.equal((await call(app, 'GET', '/whoami', { headers: { cookie: browser.cookie } })).status, 401, 'the old cookie is dead');
});

t.test('sign-out expires both cookies', async (t) => {
  const res = await call(app, 'DELETE', '/auth/session');
  t.equal(res.status, 200);
  const cookies = setCookies(res.headers);
  for (const name of ['__Host-mailpath_session', '__Host-mailpath_csrf']) {
    t.equal(cookies.get(name)?.value, '', `${name} emptied`);
    t.ok(cookies.get(name)?.attributes.includes('max-age=0'), `${name} expires now`);
  }
});

t.test("sign-out ends the session itself: a kept copy of the cookie is refused, the user's other sessions stay", async (t) => {
  const user = await registerTenant(app);
  const browser = await signIn(user);
  const elsewhere = await signIn(user);
  t.equal((await call(app, 'GET', '/whoami', { headers: { cookie: browser.cookie } })).status, 200, 'signed in before');
  const out = await call(app, 'DELETE', '/auth/session', { headers: { cookie: browser.cookie } });
  t.equal(out.status, 200);
  const copy = await call(app, 'GET', '/whoami', { headers: { cookie: browser.cookie } });
  t.equal(copy.status, 401, 'the cookie a thief copied before sign-out no longer works');
  t.equal(copy.body.error, 'unauthenticated');
  t.equal((await call(app, 'GET', '/whoami', { headers: { cookie: elsewhere.cookie } })).status, 200, 'another browser stays signed in');
  t.equal((await call(app, 'GET', '/whoami', { token: user.token })).status, 200, 'so does the Bearer session');
  const again = await call(app, 'DELETE', '/auth/session', { headers: { cookie: browser.cookie } });
  t.equal(again.status, 200, 'signing out twice is fine');
  const [row] = await test.sql<{ count: number }[]>`select count(*)::int as count from revoked_sessions where user_id = ${user.userId}`;
  t.equal(row!.count, 1, 'one revocation recorded');
});

t.test('DELETE /auth/session with a Bearer session JWT ends that session; an API key or junk ends nothing', async (t) => {
  const user = await registerTenant(app);
  const key = await call(app, 'POST', '/api-keys', { token: user.token, body: { name: 'k' } });
  const asKey = await call(app, 'DELETE', '/auth/session', { token: key.body.data.key });
  t.equal(asKey.status, 200);
  t.equal((await call(app, 'GET', '/whoami', { token: key.body.data.key })).status, 200, 'the key still works');
  t.equal((await call(app, 'DELETE', '/auth/session', { headers: { authorization: 'Bearer junk' } })).status, 200, 'junk is no error');
  t.equal((await call(app, 'GET', '/whoami', { token: user.token })).status, 200, 'the session is untouched so far');
  t.equal((await call(app, 'DELETE', '/auth/session', { token: user.token })).status, 200);
  t.equal((await call(app, 'GET', '/whoami', { token: user.token })).status, 401, 'the Bearer session is over');
});
