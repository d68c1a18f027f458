// GET /whoami: the tenant with either the API key's metadata or the signed-in user.
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';

t.test('with an API key: key metadata and tenant, no user, never the secret', async (t) => {
  const { app } = await buildTestApp(t);
  const owner = await registerTenant(app);
  const created = await call(app, 'POST', '/api-keys', {
    token: owner.token,
    body: { name: 'billing sync', scopes: ['contacts:read', 'lists:read'], mode: 'test' },
  });
  const key = created.body.data;

  const res = await call(app, 'GET', '/whoami', { token: key.key });
  t.equal(res.status, 200);
  t.equal(res.body.ok, true);
  t.equal(res.body.data.credential, 'api_key');
  t.same(res.body.data.key, { id: key.id, name: 'billing sync', prefix: key.prefix, mode: 'test', scopes: ['contacts:read', 'lists:read'] });
  t.match(res.body.data.tenant, { id: owner.tenantId, slug: owner.slug, plan_id: 'free', is_sandbox: false, status: 'active' });
  t.equal(res.body.data.user, null);
  t.notOk(JSON.stringify(res.body).includes(key.key.slice(key.prefix.length)), 'the secret is not echoed');
});

t.test('with a session JWT: the user and tenant, no key', async (t) => {
  const { app } = await buildTestApp(t);
  const owner = await registerTenant(app, { first_name: 'Ada' });
  const res = await call(app, 'GET', '/whoami', { token: owner.token });
  t.equal(res.status, 200);
  t.equal(res.body.data.credential, 'jwt');
  t.same(res.body.data.user, { id: owner.userId, email: owner.email, role: 'owner', is_super_admin: false, first_name: 'Ada' });
  t.equal(res.body.data.key, null);
  t.equal(res.body.data.tenant.id, owner.tenantId);
});

t.test('each credential sees its own tenant', async (t) => {
  const { app } = await buildTestApp(t);
  const a = await registerTenant(app);
  const b = await registerTenant(app);
  const keyA = await createKey(app, a);
  const keyB = await createKey(app, b);
  t.equal((await call(app, 'GET', '/whoami', { token: keyA.key })).body.data.tenant.id, a.tenantId);
  t.equal((await call(app, 'GET', '/whoami', { token: keyB.key })).body.data.tenant.id, b.tenantId);
  t.equal((await call(app, 'GET', '/whoami', { token: b.token })).body.data.tenant.id, b.tenantId);
});

t.test('missing, malformed, unknown and revoked credentials are 401 unauthenticated', async (t) => {
  const { app } = await buildTestApp(t);
  const owner = await registerTenant(app);
  const revoked = await createKey(app, owner);
  await call(app, 'DELETE', `/api-keys/${revoked.id}`, { token: owner.token });

  const cases: [string, Record<string, string>][] = [
    ['no header', {}],
    ['not Bearer', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }],
    ['empty Bearer', { authorization: 'Bearer ' }],
    ['two tokens', { authorization: `Bearer ${owner.token} extra` }],
    ['garbage JWT', { authorization: 'Bearer not.a.jwt' }],
    ['tampered JWT', { authorization: `Bearer ${owner.token.slice(0, -4)}AAAA` }],
    ['unknown live key', { authorization: `Bearer mp_live_${'A'.repeat(43)}` }],
    ['unknown test key', { authorization: `Bearer mp_test_${'A'.repeat(43)}` }],
    ['revoked key', { authorization: `Bearer ${revoked.key}` }],
    ['oversize credential', { authorization: `Bearer mp_live_${'A'.repeat(5000)}` }],
  ];
  for (const [label, headers] of cases) {
    const res = await call(app, 'GET', '/whoami', { headers });
    t.equal(res.status, 401, `${label} → 401`);
    t.equal(res.body.error, 'unauthenticated', `${label} slug`);
    t.same(Object.keys(res.body).sort(), ['error', 'message', 'ok']);
  }
});
