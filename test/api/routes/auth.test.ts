import t from 'tap';
import { buildTestApp, call, countRows, registerTenant } from '../../helpers/app.js';

t.test('register and login', async (t) => {
  const { app, sql } = await buildTestApp(t);

  const res = await call(app, 'POST', '/auth/register', {
    body: { tenant_name: 'Acme', tenant_slug: 'acme', email: 'Owner@Acme.test', password: 'Correct-horse-42' },
  });
  t.equal(res.status, 201);
  t.equal(res.body.ok, true);
  t.match(res.body.data, { token: String, user_id: String, tenant_id: String, expires_at: Number });
  t.ok(res.body.data.expires_at > Date.now() / 1000, 'expires in the future');

  const [user] = await sql`select email, password_hash, role from users where id = ${res.body.data.user_id}`;
  t.equal(user!.email, 'owner@acme.test', 'email stored lowercased');
  t.match(user!.password_hash, /^\$2[aby]\$/, 'password stored as bcrypt');
  t.equal(user!.role, 'owner');

  const login = await call(app, 'POST', '/auth/login', { body: { email: 'OWNER@acme.test', password: 'Correct-horse-42' } });
  t.equal(login.status, 200);
  t.equal(login.body.data.tenant_id, res.body.data.tenant_id);

  const who = await call(app, 'GET', '/whoami', { token: login.body.data.token });
  t.equal(who.status, 200);
  t.equal(who.body.data.credential, 'jwt');
  t.equal(who.body.data.tenant.slug, 'acme');
  t.equal(who.body.data.user.email, 'owner@acme.test');
  t.equal(who.body.data.key, null);
});

t.test('wrong credentials give one indistinct 401', async (t) => {
  const { app } = await buildTestApp(t);
  const tenant = await registerTenant(app);
  const wrongPassword = await call(app, 'POST', '/auth/login', { body: { email: tenant.email, password: 'Wrong-password-1' } });
  const unknownEmail = await call(app, 'POST', '/auth/login', { body: { email: 'nobody@example.test', password: tenant.password } });
  t.equal(wrongPassword.status, 401);
  t.equal(unknownEmail.status, 401);
  t.same(wrongPassword.body, unknownEmail.body, 'same answer whichever part was wrong');
  t.equal(wrongPassword.body.error, 'unauthenticated');
});

t.test('duplicate slug or email is 409 and writes nothing', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const first = await registerTenant(app, { tenant_slug: 'taken-slug', email: 'first@example.test' });
  t.ok(first.tenantId);
  const before = await countRows(sql, 'tenants');

  const dupSlug = await call(app, 'POST', '/auth/register', {
    body: { tenant_name: 'X', tenant_slug: 'taken-slug', email: 'second@example.test', password: 'Correct-horse-42' },
  });
  t.equal(dupSlug.status, 409);
  t.equal(dupSlug.body.error, 'conflict');
  t.match(dupSlug.body.message, /tenant_slug/);

  const dupEmail = await call(app, 'POST', '/auth/register', {
    body: { tenant_name: 'Y', tenant_slug: 'fresh-slug', email: 'FIRST@example.test', password: 'Correct-horse-42' },
  });
  t.equal(dupEmail.status, 409);
  t.match(dupEmail.body.message, /email/);

  const after = await countRows(sql, 'tenants');
  t.equal(after, before, 'no tenant left behind by the failed registrations');
});

t.test('weak passwords and bad slugs are 422 naming the field', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const base = { tenant_name: 'Acme', tenant_slug: 'acme-co', email: 'x@acme.test', password: 'Correct-horse-42' };
  const cases: [Record<string, unknown>, string][] = [
    [{ password: 'short1A' }, 'password'],
    [{ password: 'alllowercaseletters' }, 'password'],
    [{ password: '1234567890' }, 'password'],
    [{ password: `${'x'.repeat(80)}1A` }, 'password'],
    [{ tenant_slug: 'Bad_Slug' }, 'tenant_slug'],
    [{ tenant_slug: 'ab' }, 'tenant_slug'],
    [{ tenant_slug: '-leading' }, 'tenant_slug'],
    [{ tenant_slug: 'admin' }, 'tenant_slug'],
    [{ email: 'not-an-email' }, 'email'],
    [{ tenant_name: '' }, 'tenant_name'],
  ];
  for (const [change, field] of cases) {
    const res = await call(app, 'POST', '/auth/register', { body: { ...base, ...change } });
    t.equal(res.status, 422, `${JSON.stringify(change)} → 422`);
    t.equal(res.body.error, 'validation_error');
    t.match(res.body.message, new RegExp(`^${field}`), `message names ${field}`);
  }
  t.equal(await countRows(sql, 'tenants'), 1, 'nothing written: only the super-admin tenant exists');
  t.equal(await countRows(sql, 'users'), 1);
});

t.test('a registering tenant starts on auth.registration_plan: free by default, another when configured', async (t) => {
  const plain = await buildTestApp(t);
  const free = await registerTenant(plain.app);
  t.equal((await plain.sql`select plan_id from tenants where id = ${free.tenantId}`)[0]!['plan_id'], 'free');
  const trial = await buildTestApp(t, { env: { MAILPATH_CONFIG__AUTH__REGISTRATION_PLAN: 'starter' } });
  const starter = await registerTenant(trial.app);
  t.equal((await trial.sql`select plan_id from tenants where id = ${starter.tenantId}`)[0]!['plan_id'], 'starter');
});
