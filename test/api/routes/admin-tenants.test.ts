// Super-admin tenant routes: who may call them (every one), the list's filters and sorting, and the operator detail.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import type { Sql } from '../../../shared/db/connection.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';
import { CAMPAIGN_ENV, sender } from '../../helpers/campaigns.js';

async function platformTenantId(sql: Sql): Promise<string> {
  const [row] = await sql<{ id: string }[]>`select id from tenants where is_super_admin`;
  return row!.id;
}

t.test('every tenant route is for super-admins only', async (t) => {
  const { app } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const tenant = await registerTenant(app);
  const key = await createKey(app, tenant);
  const id = tenant.tenantId;
  const routes: [method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown][] = [
    ['GET', '/admin/tenants'],
    ['GET', `/admin/tenants/${id}`],
    ['DELETE', `/admin/tenants/${id}`],
    ['POST', `/admin/tenants/${id}/suspend`],
    ['POST', `/admin/tenants/${id}/unsuspend`],
    ['POST', `/admin/tenants/${id}/impersonate`, {}],
    ['POST', '/admin/tenants/bulk-action', { tenant_ids: [id], action: 'suspend' }],
    ['POST', '/admin/tenants/bulk/suspend', { tenant_ids: [id] }],
    ['POST', '/admin/tenants/bulk/unsuspend', { tenant_ids: [id] }],
    ['POST', '/admin/tenants/bulk/delete', { tenant_ids: [id] }],
  ];
  for (const [method, url, body] of routes) {
    const none = await call(app, method, url, { body });
    t.equal(none.status, 401, `${method} ${url} without a credential → 401`);
    t.equal(none.body.error, 'unauthenticated');
    for (const [label, token] of [
      ['a tenant owner JWT', tenant.token],
      ['a tenant API key', key.key],
    ] as const) {
      const res = await call(app, method, url, { token, body });
      t.equal(res.status, 403, `${method} ${url} with ${label} → 403`);
      t.equal(res.body.error, 'forbidden');
    }
  }
  // Nothing above changed the tenant.
  const still = await call(app, 'GET', `/admin/tenants/${id}`, { token: admin });
  t.equal(still.body.data.status, 'active');
});

t.test('GET /admin/tenants filters by status, plan, sandbox and q, and sorts', async (t) => {
  const s = await buildTestApp(t);
  const admin = await superAdminToken(s.app);
  const alpha = await registerTenant(s.app, { tenant_name: 'Alpha Widgets' });
  const beta = await registerTenant(s.app, { tenant_name: 'beta gadgets' });
  const gamma = await registerTenant(s.app, { tenant_name: 'Gamma 100%_off' });
  await s.sql`insert into plans (id, name, monthly_send_cap) values ('pro', 'Pro', 100000) on conflict (id) do nothing`;
  await s.sql`update tenants set plan_id = 'pro', is_sandbox = true where id = ${beta.tenantId}`;
  t.equal((await call(s.app, 'POST', `/admin/tenants/${gamma.tenantId}/suspend`, { token: admin, body: { reason: 'chargeback' } })).status, 200);

  const ids = async (query: string) => {
    const res = await call(s.app, 'GET', `/admin/tenants?${query}`, { token: admin });
    t.equal(res.status, 200, query);
    return { ids: res.body.data.items.map((i: { id: string }) => i.id) as string[], total: res.body.data.total as number, items: res.body.data.items };
  };
  const suspended = await ids('status=suspended');
  t.same(suspended.ids, [gamma.tenantId], 'status=suspended');
  t.equal(suspended.total, 1);
  t.match(suspended.items[0], { status: 'suspended', suspension_reason: 'chargeback' });
  t.match(suspended.items[0].suspended_at, /^\d{4}-/);
  t.notOk((await ids('status=active')).ids.includes(gamma.tenantId), 'status=active leaves it out');
  t.same((await ids('plan=pro')).ids, [beta.tenantId], 'plan=pro');
  t.same((await ids('sandbox=true')).ids, [beta.tenantId], 'sandbox=true');
  t.equal((await ids('sandbox=false')).total, 3, 'sandbox=false: the platform tenant and two others');
  t.same((await ids('q=WIDGETS')).ids, [alpha.tenantId], 'q matches the name case-insensitively');
  t.same((await ids(`q=${encodeURIComponent(beta.slug)}`)).ids, [beta.tenantId], 'q matches the slug');
  t.same((await ids(`q=${alpha.tenantId}`)).ids, [alpha.tenantId], 'q matches a whole id');
  t.same((await ids(`q=${encodeURIComponent('100%_')}`)).ids, [gamma.tenantId], '% and _ in q are literal');
  t.same((await ids('q=50%25')).ids, [], 'no match');
  t.same((await ids('status=active&plan=pro&sandbox=true&q=gadgets')).ids, [beta.tenantId], 'filters combine');

  const byName = (await ids('sort=name&q=t-')).items.map((i: { name: string }) => i.name.toLowerCase());
  t.same(byName, [...byName].sort(), 'sort=name ascends');
  const desc = (await ids('sort=-name&q=t-')).items.map((i: { name: string }) => i.name.toLowerCase());
  t.same(desc, [...byName].reverse(), 'sort=-name descends');
  const newest = await ids('');
  t.equal(newest.ids[0], gamma.tenantId, 'default: newest first');
  t.equal((await ids('sort=created_at')).ids[0], await platformTenantId(s.sql), 'sort=created_at: oldest first');
  const page = await ids('sort=created_at&limit=2&offset=1');
  t.same(page.ids, [alpha.tenantId, beta.tenantId], 'paging applies after the sort');
  t.equal(page.total, 4);

  for (const q of ['status=frozen', 'sort=id', 'sandbox=maybe']) {
    const res = await call(s.app, 'GET', `/admin/tenants?${q}`, { token: admin });
    t.equal(res.status, 422, `${q} → 422`);
    t.equal(res.body.error, 'validation_error');
  }
});

t.test('GET /admin/tenants/{id} gives the operator detail', async (t) => {
  const s = await buildTestApp(t, { env: CAMPAIGN_ENV });
  const admin = await superAdminToken(s.app);
  const snd = await sender(s);
  const key = await createKey(s.app, snd.tenant);
  for (const to of ['one@example.test', 'two@example.test']) {
    const res = await call(s.app, 'POST', '/transactional/send', { token: key.key, body: { from_email: snd.from, to, subject: 'Hi', body_text: 'Hi' } });
    t.ok(res.status < 300, `send to ${to}`);
  }
  // One hard bounce and one complaint in the window, one bounce before it (not counted).
  await s.sql`
    insert into events (id, tenant_id, type, subtype, recipient, occurred_at)
    values (${randomUUID()}, ${snd.tenant.tenantId}, 'bounce', 'hard', 'one@example.test', now()),
           (${randomUUID()}, ${snd.tenant.tenantId}, 'complaint', null, 'two@example.test', now()),
           (${randomUUID()}, ${snd.tenant.tenantId}, 'bounce', 'soft', 'old@example.test', now() - interval '40 days')`;
  await s.sql`insert into domain_warmup (domain_id, tenant_id, tier, tier_changed_at) values (${snd.domain.id}, ${snd.tenant.tenantId}, 0, now())
              on conflict (domain_id) do update set tier = 0`;

  const res = await call(s.app, 'GET', `/admin/tenants/${snd.tenant.tenantId}`, { token: admin });
  t.equal(res.status, 200);
  const d = res.body.data;
  t.match(d, {
    id: snd.tenant.tenantId,
    status: 'active',
    is_sandbox: false,
    suspension: { suspended: false, suspended_at: null, reason: null },
    plan: { id: 'campaigns', name: 'Campaigns', monthly_send_cap: 1000000 },
    quota: { used: 2, cap: 1000000, remaining: 999998 },
    sends_24h: 2,
    rates: { window_days: 30, sent: 2, bounces: 1, hard_bounces: 1, complaints: 1, bounce_rate: 0.5, complaint_rate: 0.5 },
  });
  t.match(d.quota.month, /^\d{4}-\d\d$/);
  t.equal(d.domains.length, 1);
  t.match(d.domains[0], { id: snd.domain.id, name: snd.domain.name, verified: true, drifted: false, warmup_tier: 0, warmup_daily_cap: 1000000 });

  await call(s.app, 'POST', `/admin/tenants/${snd.tenant.tenantId}/suspend`, { token: admin, body: { reason: 'spam complaints' } });
  const after = (await call(s.app, 'GET', `/admin/tenants/${snd.tenant.tenantId}`, { token: admin })).body.data;
  t.match(after.suspension, { suspended: true, reason: 'spam complaints' });
  t.match(after.suspension.suspended_at, /^\d{4}-/);

  const fresh = await registerTenant(s.app);
  const empty = (await call(s.app, 'GET', `/admin/tenants/${fresh.tenantId}`, { token: admin })).body.data;
  t.match(empty, { sends_24h: 0, domains: [], rates: { sent: 0, bounce_rate: null, complaint_rate: null }, quota: { used: 0 } });
});
