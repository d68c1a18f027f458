// Super-admin tenant routes: who may call them, the tenant list (limit/offset) and one tenant.
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant, superAdminToken, SUPER_ADMIN } from '../../helpers/app.js';

t.test('every /admin route needs a super-admin user credential', async (t) => {
  const { app } = await buildTestApp(t);
  const tenant = await registerTenant(app);
  const tenantKey = await createKey(app, tenant);
  const admin = await superAdminToken(app);
  const adminKey = await createKey(app, { token: admin } as Parameters<typeof createKey>[1], { name: 'platform key' });
  const routes = ['/admin/tenants', `/admin/tenants/${tenant.tenantId}`];

  for (const url of routes) {
    const none = await call(app, 'GET', url);
    t.equal(none.status, 401, `${url} without a credential → 401`);
    t.equal(none.body.error, 'unauthenticated');

    const bad = await call(app, 'GET', url, { token: 'not-a-token' });
    t.equal(bad.status, 401, `${url} with a bad credential → 401`);

    const normal = await call(app, 'GET', url, { token: tenant.token });
    t.equal(normal.status, 403, `${url} with a normal tenant's JWT → 403`);
    t.equal(normal.body.error, 'forbidden');

    for (const [label, key] of [
      ['a tenant key', tenantKey.key],
      ["the super-admin tenant's key", adminKey.key],
    ] as const) {
      const res = await call(app, 'GET', url, { token: key });
      t.equal(res.status, 403, `${url} with ${label} → 403`);
      t.equal(res.body.error, 'forbidden');
    }

    t.equal((await call(app, 'GET', url, { token: admin })).status, 200, `${url} with the super-admin JWT → 200`);
  }

  const who = await call(app, 'GET', '/whoami', { token: admin });
  t.equal(who.body.data.user.email, SUPER_ADMIN.email);
  t.equal(who.body.data.user.is_super_admin, true);
});

t.test('GET /admin/tenants lists every tenant with limit and offset', async (t) => {
  const { app } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const a = await registerTenant(app);
  const b = await registerTenant(app);
  await createKey(app, b);
  await createKey(app, b);

  const all = await call(app, 'GET', '/admin/tenants', { token: admin });
  t.equal(all.status, 200);
  t.equal(all.body.ok, true);
  t.equal(all.body.data.total, 3, 'the super-admin tenant and two registered ones');
  t.equal(all.body.data.limit, 50, 'default limit');
  t.equal(all.body.data.offset, 0);
  const ids = all.body.data.items.map((i: { id: string }) => i.id);
  t.ok(ids.includes(a.tenantId) && ids.includes(b.tenantId));
  const platform = all.body.data.items.find((i: { is_super_admin: boolean }) => i.is_super_admin);
  t.match(platform, { slug: 'mailpath-platform', plan_id: 'platform', user_count: 1 });
  const tb = all.body.data.items.find((i: { id: string }) => i.id === b.tenantId);
  t.match(tb, { id: b.tenantId, slug: b.slug, plan_id: 'free', is_sandbox: false, is_super_admin: false, status: 'active', user_count: 1, api_key_count: 2 });
  t.match(tb.created_at, /^\d{4}-\d\d-\d\dT.*Z$/);

  const seen: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const page = await call(app, 'GET', `/admin/tenants?limit=1&offset=${offset}`, { token: admin });
    t.equal(page.status, 200);
    t.equal(page.body.data.items.length, 1);
    t.equal(page.body.data.total, 3);
    t.equal(page.body.data.limit, 1);
    t.equal(page.body.data.offset, offset);
    seen.push(page.body.data.items[0].id);
  }
  t.same(seen, ids, 'pages walk the same order as the full list');
  const past = await call(app, 'GET', '/admin/tenants?limit=10&offset=3', { token: admin });
  t.same(past.body.data.items, [], 'past the end is empty');
  t.equal(past.body.data.total, 3);

  for (const q of ['limit=0', 'limit=201', 'limit=bad', 'offset=-1', 'limit=1.5']) {
    const res = await call(app, 'GET', `/admin/tenants?${q}`, { token: admin });
    t.equal(res.status, 422, `${q} → 422`);
    t.equal(res.body.error, 'validation_error');
    t.match(res.body.message, new RegExp(`^${q.split('=')[0]}`), 'names the parameter');
  }
});

t.test('GET /admin/tenants/{id} reads one; unknown and malformed ids are 404', async (t) => {
  const { app } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const tenant = await registerTenant(app);
  await createKey(app, tenant);

  const res = await call(app, 'GET', `/admin/tenants/${tenant.tenantId}`, { token: admin });
  t.equal(res.status, 200);
  t.match(res.body.data, { id: tenant.tenantId, slug: tenant.slug, user_count: 1, api_key_count: 1, status: 'active' });

  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '1', "x'or'1'='1"]) {
    const miss = await call(app, 'GET', `/admin/tenants/${encodeURIComponent(id)}`, { token: admin });
    t.equal(miss.status, 404, `${id} → 404`);
    t.equal(miss.body.error, 'not_found');
  }
});
