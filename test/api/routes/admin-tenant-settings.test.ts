// Super-admin tenant settings: plan changes keep the month's quota count, the sandbox flag really intercepts sends, the rate-limit override and its reset,
// and the utilization view of GET /admin/ratelimits.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { RateLimiter } from '../../../shared/limits/rate-limits/limiter.js';
import { TenantLimits } from '../../../shared/limits/rate-limits/tenant-limits.js';
import { utcMonth } from '../../../shared/deliverability/warmup/tiers.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken, type TestApp } from '../../helpers/app.js';
import { CAMPAIGN_ENV, sender } from '../../helpers/campaigns.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

async function auditActions(s: TestApp, tenantId: string, prefix: string): Promise<{ action: string; metadata: any; actor_type: string }[]> {
  return s.sql`select action, metadata, actor_type from audit_events where tenant_id = ${tenantId} and action like ${`${prefix}%`} order by id`;
}

t.test('PUT /admin/tenants/{id}/plan moves the tenant and keeps the month’s quota count', async (t) => {
  const s = await buildTestApp(t);
  const admin = await superAdminToken(s.app);
  const tenant = await registerTenant(s.app);
  await s.sql`insert into plans (id, name, monthly_send_cap) values ('settings-test', 'Settings test', 100000) on conflict (id) do nothing`;
  await s.sql`insert into tenant_monthly_usage (tenant_id, month, sent) values (${tenant.tenantId}, ${utcMonth(new Date())}, 1234)`;

  const res = await call(s.app, 'PUT', `/admin/tenants/${tenant.tenantId}/plan`, { token: admin, body: { plan_id: 'settings-test' } });
  t.equal(res.status, 200);
  t.same(res.body.data, {
    tenant_id: tenant.tenantId,
    plan_id: 'settings-test',
    previous_plan_id: 'free',
    monthly_send_cap: 100000,
    quota_used: 1234,
    changed: true,
    campaigns_resumed: 0,
  });
  const [row] = await s.sql<{ plan_id: string }[]>`select plan_id from tenants where id = ${tenant.tenantId}`;
  t.equal(row!.plan_id, 'settings-test');
  const [usage] = await s.sql<{ sent: number }[]>`select sent from tenant_monthly_usage where tenant_id = ${tenant.tenantId}`;
  t.equal(usage!.sent, 1234, 'the quota counter is not reset');
  const detail = await call(s.app, 'GET', `/admin/tenants/${tenant.tenantId}`, { token: admin });
  t.match(detail.body.data.quota, { used: 1234, cap: 100000 });
  const audit = await auditActions(s, tenant.tenantId, 'tenant.plan');
  t.equal(audit.length, 1);
  t.match(audit[0], { action: 'tenant.plan_changed', actor_type: 'user', metadata: { previous_plan_id: 'free', plan_id: 'settings-test' } });

  const same = await call(s.app, 'PUT', `/admin/tenants/${tenant.tenantId}/plan`, { token: admin, body: { plan_id: 'settings-test' } });
  t.equal(same.body.data.changed, false, 'the same plan again changes nothing');
  t.equal((await auditActions(s, tenant.tenantId, 'tenant.plan')).length, 1, '…and writes no audit row');

  const unknownPlan = await call(s.app, 'PUT', `/admin/tenants/${tenant.tenantId}/plan`, { token: admin, body: { plan_id: 'platinum' } });
  t.equal(unknownPlan.status, 422);
  t.equal(unknownPlan.body.error, 'validation_error');
  t.match(unknownPlan.body.message, /plan_id/);
  t.equal((await call(s.app, 'PUT', `/admin/tenants/${UNKNOWN}/plan`, { token: admin, body: { plan_id: 'settings-test' } })).status, 404);
  t.equal((await call(s.app, 'PUT', `/admin/tenants/${tenant.tenantId}/plan`, { token: admin, body: {} })).status, 422, 'plan_id is required');
});

t.test('PUT /admin/tenants/{id}/sandbox intercepts the tenant’s sends, and lets them go again', async (t) => {
  const s = await buildTestApp(t, { env: CAMPAIGN_ENV });
  const admin = await superAdminToken(s.app);
  const snd = await sender(s);
  const key = await createKey(s.app, snd.tenant);
  const send = async (to: string) => {
    const res = await call(s.app, 'POST', '/transactional/send', { token: key.key, body: { from_email: snd.from, to, subject: 'Hi', body_text: 'Hi' } });
    t.ok(res.status < 300, `send to ${to}: ${res.status}`);
    return res.body.data.status as string;
  };
  t.not(await send('before@example.test'), 'simulated', 'a live send outside the sandbox is not simulated');

  const on = await call(s.app, 'PUT', `/admin/tenants/${snd.tenant.tenantId}/sandbox`, { token: admin, body: { is_sandbox: true } });
  t.equal(on.status, 200);
  t.same(on.body.data, { tenant_id: snd.tenant.tenantId, is_sandbox: true });
  t.equal(await send('inside@example.test'), 'simulated', 'in the sandbox the next send is simulated at once (cached credentials dropped)');
  const [simulated] = await s.sql<{ status: string }[]>`select status from sends where tenant_id = ${snd.tenant.tenantId} and to_email = 'inside@example.test'`;
  t.equal(simulated!.status, 'simulated');
  t.equal((await call(s.app, 'GET', `/admin/tenants/${snd.tenant.tenantId}`, { token: admin })).body.data.is_sandbox, true);

  const off = await call(s.app, 'PUT', `/admin/tenants/${snd.tenant.tenantId}/sandbox`, { token: admin, body: { is_sandbox: false } });
  t.same(off.body.data, { tenant_id: snd.tenant.tenantId, is_sandbox: false });
  t.not(await send('after@example.test'), 'simulated', 'out of the sandbox sends are live again');

  const audit = await auditActions(s, snd.tenant.tenantId, 'tenant.sandbox');
  t.same(
    audit.map((a) => a.action),
    ['tenant.sandbox_enabled', 'tenant.sandbox_disabled'],
    'each flip audited',
  );
  await call(s.app, 'PUT', `/admin/tenants/${snd.tenant.tenantId}/sandbox`, { token: admin, body: { is_sandbox: false } });
  t.equal((await auditActions(s, snd.tenant.tenantId, 'tenant.sandbox')).length, 2, 'no flip, no audit row');

  const unknown = await call(s.app, 'PUT', `/admin/tenants/${UNKNOWN}/sandbox`, { token: admin, body: { is_sandbox: true } });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error, 'not_found');
  t.equal((await call(s.app, 'PUT', `/admin/tenants/${snd.tenant.tenantId}/sandbox`, { token: admin, body: { is_sandbox: 'yes' } })).status, 422);
});

t.test('GET/PUT /admin/tenants/{id}/rate-limit: the override applies at once, {} resets to the default', async (t) => {
  const clock = new ManualClock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 30_500));
  const s = await buildTestApp(t, { clock, env: { MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC: '50' } });
  s.ctx.rateLimiter = new RateLimiter(s.sql, s.ctx.log, s.config.limits.rate_limits.sync_interval_ms, () => clock.now().getTime());
  const admin = await superAdminToken(s.app);
  const tenant = await registerTenant(s.app);
  const url = `/admin/tenants/${tenant.tenantId}/rate-limit`;

  const initial = await call(s.app, 'GET', url, { token: admin });
  t.equal(initial.status, 200);
  t.same(initial.body.data, {
    tenant_id: tenant.tenantId,
    api_requests_per_sec: null,
    api_requests_per_day: null,
    notes: null,
    default_per_sec: 50,
    updated_at: null,
  });

  // The tenant's override table was read (and cached for a minute) before the change: the PUT must drop that cache.
  clock.advance(2000);
  t.equal((await call(s.app, 'GET', '/whoami', { token: tenant.token })).status, 200);
  // Another process's cache of the same database (config/limits.yaml override_cache_ms, 60 s).
  const elsewhere = new TenantLimits(s.sql, 50, s.config.limits.rate_limits.override_cache_ms, () => clock.now().getTime());
  t.equal((await elsewhere.get(tenant.tenantId)).perSec, 50);
  const set = await call(s.app, 'PUT', url, { token: admin, body: { api_requests_per_sec: 2, notes: 'noisy neighbour' } });
  t.equal(set.status, 200);
  t.match(set.body.data, { api_requests_per_sec: 2, api_requests_per_day: null, notes: 'noisy neighbour', default_per_sec: 50 });
  t.match(set.body.data.updated_at, /^\d{4}-/);
  t.same((await call(s.app, 'GET', url, { token: admin })).body.data, set.body.data, 'GET reads it back');
  t.equal(s.config.limits.rate_limits.override_cache_ms, 60_000);
  clock.advance(59_000);
  t.equal((await elsewhere.get(tenant.tenantId)).perSec, 50, 'another process keeps its cached value for up to a minute');
  clock.advance(1_000);
  t.equal((await elsewhere.get(tenant.tenantId)).perSec, 2, 'within 60 s every process applies the override');

  clock.advance(2000);
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) statuses.push((await call(s.app, 'GET', '/whoami', { token: tenant.token })).status);
  t.same(statuses, [200, 200, 429], 'the new cap of 2 per second applies at once');

  const reset = await call(s.app, 'PUT', url, { token: admin, body: {} });
  t.same(
    reset.body.data,
    { tenant_id: tenant.tenantId, api_requests_per_sec: null, api_requests_per_day: null, notes: null, default_per_sec: 50, updated_at: null },
    '{} resets',
  );
  t.equal((await s.sql`select 1 from tenant_rate_limits where tenant_id = ${tenant.tenantId}`).length, 0, 'the override row is gone');
  clock.advance(2000);
  const after: number[] = [];
  for (let i = 0; i < 3; i++) after.push((await call(s.app, 'GET', '/whoami', { token: tenant.token })).status);
  t.same(after, [200, 200, 200], 'back on the default');

  const audit = await auditActions(s, tenant.tenantId, 'tenant.rate_limit');
  t.same(
    audit.map((a) => a.action),
    ['tenant.rate_limit_set', 'tenant.rate_limit_reset'],
  );
  t.match(audit[0]!.metadata, { before: null, after: { api_requests_per_sec: 2, notes: 'noisy neighbour' } });
  t.match(audit[1]!.metadata, { before: { api_requests_per_sec: 2 }, after: null });

  t.equal((await call(s.app, 'GET', `/admin/tenants/${UNKNOWN}/rate-limit`, { token: admin })).status, 404);
  t.equal((await call(s.app, 'PUT', `/admin/tenants/${UNKNOWN}/rate-limit`, { token: admin, body: {} })).status, 404);
  t.equal((await call(s.app, 'PUT', url, { token: admin, body: { api_requests_per_sec: 0 } })).status, 422, 'a cap of 0 is refused');
  t.equal((await call(s.app, 'PUT', url, { token: admin, body: { burst: 5 } })).status, 400, 'an unknown field is refused');
});

t.test('GET /admin/ratelimits: capacity, peak, utilization, recent 429s, sorted', async (t) => {
  const clock = new ManualClock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 30_500));
  const s = await buildTestApp(t, { clock, env: { MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC: '3' } });
  const limiter = new RateLimiter(s.sql, s.ctx.log, s.config.limits.rate_limits.sync_interval_ms, () => clock.now().getTime());
  s.ctx.rateLimiter = limiter;
  const [platform] = await s.sql<{ id: string }[]>`select id from tenants where is_super_admin`;
  // The operator's own calls count in its tenant too: give it room.
  await s.sql`insert into tenant_rate_limits (tenant_id, api_requests_per_sec) values (${platform!.id}, 1000)`;
  const admin = await superAdminToken(s.app);
  const busy = await registerTenant(s.app, { tenant_name: 'Busy' });
  const full = await registerTenant(s.app, { tenant_name: 'Full' });
  const calm = await registerTenant(s.app, { tenant_name: 'Calm' });
  const idle = await registerTenant(s.app, { tenant_name: 'Idle' });
  await s.sql`insert into tenant_rate_limits (tenant_id, api_requests_per_sec) values (${idle.tenantId}, 10)`;

  clock.advance(20_000); // registrations out of the 10-second look-back
  const hits = async (token: string, n: number) => {
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await call(s.app, 'GET', '/whoami', { token })).status);
    return out;
  };
  t.same(await hits(busy.token, 5), [200, 200, 200, 429, 429], 'Busy: 3 admitted, 2 refused');
  t.same(await hits(full.token, 3), [200, 200, 200], 'Full: at its cap, never refused');
  t.same(await hits(calm.token, 1), [200]);
  await limiter.sync();

  const res = await call(s.app, 'GET', '/admin/ratelimits', { token: admin });
  t.equal(res.status, 200);
  const d = res.body.data;
  t.equal(d.as_of, clock.now().toISOString());
  t.same(d.errors, []);
  const mine = d.items.filter((i: { tenant_id: string }) => [busy, full, calm, idle].some((x) => x.tenantId === i.tenant_id));
  t.same(
    mine.map((i: { tenant_name: string }) => i.tenant_name),
    ['Busy', 'Full', 'Calm', 'Idle'],
    'utilization desc, then throttle count desc (Busy before Full at 100%), then name',
  );
  t.match(mine[0], { capacity: 3, current: 3, utilization_pct: 100, recent_throttle_count: 2, last_throttle_at: clock.now().toISOString() });
  t.same(
    mine[1],
    { tenant_id: full.tenantId, tenant_name: 'Full', capacity: 3, current: 3, utilization_pct: 100, recent_throttle_count: 0 },
    'last_throttle_at omitted without refusals',
  );
  t.match(mine[2], { capacity: 3, current: 1, utilization_pct: 33.3 });
  t.match(mine[3], { capacity: 10, current: 0, utilization_pct: 0, recent_throttle_count: 0 }, 'a tenant with an override is listed even idle');

  clock.advance(6 * 60_000);
  const later = await call(s.app, 'GET', '/admin/ratelimits', { token: admin });
  const busyLater = later.body.data.items.find((i: { tenant_id: string }) => i.tenant_id === busy.tenantId);
  t.notOk(busyLater, 'six minutes on, Busy has neither traffic nor refusals in the windows');
});
