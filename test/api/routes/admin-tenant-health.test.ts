// Super-admin tenant activity and health: who may call the routes of issue 18 items 4–5, the audit trail, the database figures, the health checks and their
// run-now, the digest run-now to a real chat webhook.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { startChatNotifier } from '../../../jobs/chat-notifier.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';
import { CAMPAIGN_ENV, sender } from '../../helpers/campaigns.js';
import { pollUntil } from '../../helpers/smtp-sink.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';

const UNKNOWN = '00000000-0000-4000-8000-000000000000';

t.test('the plan, sandbox, rate-limit, activity and health routes are for super-admins only', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const tenant = await registerTenant(app);
  const key = await createKey(app, tenant);
  const id = tenant.tenantId;
  const routes: [method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown][] = [
    ['PUT', `/admin/tenants/${id}/plan`, { plan_id: 'free' }],
    ['PUT', `/admin/tenants/${id}/sandbox`, { is_sandbox: true }],
    ['GET', `/admin/tenants/${id}/rate-limit`],
    ['PUT', `/admin/tenants/${id}/rate-limit`, { api_requests_per_sec: 1 }],
    ['GET', '/admin/ratelimits'],
    ['GET', `/admin/tenants/${id}/activity`],
    ['GET', `/admin/tenants/${id}/db-health`],
    ['GET', `/admin/tenants/${id}/health-checks`],
    ['POST', `/admin/tenants/${id}/health-checks/run-now`],
    ['POST', `/admin/tenants/${id}/digest/run-now`],
  ];
  for (const [method, url, body] of routes) {
    const none = await call(app, method, url, { body });
    t.equal(none.status, 401, `${method} ${url} without a credential → 401`);
    for (const [label, token] of [
      ['a tenant owner JWT', tenant.token],
      ['a tenant API key', key.key],
    ] as const) {
      const res = await call(app, method, url, { token, body });
      t.equal(res.status, 403, `${method} ${url} with ${label} → 403`);
      t.equal(res.body.error, 'forbidden');
    }
  }
  const [row] = await sql<{ is_sandbox: boolean }[]>`select is_sandbox from tenants where id = ${id}`;
  t.equal(row!.is_sandbox, false, 'nothing changed');
  t.equal((await sql`select 1 from tenant_rate_limits where tenant_id = ${id}`).length, 0);
  t.equal((await sql`select 1 from tenant_health_checks where tenant_id = ${id}`).length, 0);
});

t.test('GET /admin/tenants/{id}/activity: the last audit entries with actor and event, newest first', async (t) => {
  const s = await buildTestApp(t);
  const admin = await superAdminToken(s.app);
  const tenant = await registerTenant(s.app);
  await createKey(s.app, tenant, { name: 'ci key' });
  t.equal((await call(s.app, 'POST', `/admin/tenants/${tenant.tenantId}/suspend`, { token: admin, body: { reason: 'abuse' } })).status, 200);

  const res = await call(s.app, 'GET', `/admin/tenants/${tenant.tenantId}/activity`, { token: admin });
  t.equal(res.status, 200);
  const items = res.body.data.items;
  t.ok(items.length >= 2, 'the key creation and the suspension at least');
  t.match(items[0], {
    event: 'tenant.suspended',
    actor: { type: 'user', label: 'root@mailpath.test' },
    resource_type: 'tenant',
    resource_id: tenant.tenantId,
    metadata: { reason: 'abuse' },
  });
  t.match(items[0].at, /^\d{4}-/);
  const ids = items.map((i: { id: string }) => Number(i.id));
  t.same(
    ids,
    [...ids].sort((a, b) => b - a),
    'newest first',
  );
  const keyEntry = items.find((i: { event: string }) => i.event.startsWith('api_key'));
  t.ok(keyEntry, 'the tenant’s own action is there');
  t.match(keyEntry, { actor: { type: 'user', label: tenant.email } });

  t.equal((await call(s.app, 'GET', `/admin/tenants/${tenant.tenantId}/activity?limit=1`, { token: admin })).body.data.items.length, 1, 'limit=1');
  t.equal((await call(s.app, 'GET', `/admin/tenants/${tenant.tenantId}/activity?limit=0`, { token: admin })).body.data.items.length, 1, 'limit=0 clamps to 1');
  t.equal((await call(s.app, 'GET', `/admin/tenants/${tenant.tenantId}/activity?limit=9999`, { token: admin })).status, 200, 'a large limit clamps');
  const other = await registerTenant(s.app);
  t.same(
    (await call(s.app, 'GET', `/admin/tenants/${other.tenantId}/activity`, { token: admin })).body.data.items.filter(
      (i: { event: string }) => i.event === 'tenant.suspended',
    ),
    [],
    'another tenant’s entries stay out',
  );
  t.equal((await call(s.app, 'GET', `/admin/tenants/${UNKNOWN}/activity`, { token: admin })).status, 404);
});

t.test('GET /admin/tenants/{id}/db-health: each probe answers, the one without its extension is null', async (t) => {
  const s = await buildTestApp(t);
  const admin = await superAdminToken(s.app);
  const tenant = await registerTenant(s.app);
  const res = await call(s.app, 'GET', `/admin/tenants/${tenant.tenantId}/db-health`, { token: admin });
  t.equal(res.status, 200);
  const d = res.body.data;
  t.same(Object.keys(d).sort(), ['connections_active', 'db_size_mb', 'last_vacuum_at', 'replication_lag_s', 'slow_query_count_24h']);
  t.ok(d.connections_active >= 1, 'at least the probe itself is active');
  t.ok(d.db_size_mb > 0);
  t.equal(d.replication_lag_s, 0, 'a primary without replicas lags by 0');
  t.ok(d.last_vacuum_at === null || /^\d{4}-/.test(d.last_vacuum_at));
  const [loaded] = await s.sql<{ on: boolean }[]>`select current_setting('shared_preload_libraries') like '%pg_stat_statements%' as on`;
  if (!loaded!.on) t.equal(d.slow_query_count_24h, null, 'pg_stat_statements not loaded: its probe fails and yields null, the others still answer');
  t.equal((await call(s.app, 'GET', `/admin/tenants/${UNKNOWN}/db-health`, { token: admin })).status, 404);
});

t.test('health checks: run-now ignores the 06:00 UTC gate, stores the run, lists newest first with a clamped limit', async (t) => {
  // 05:00 UTC tomorrow: before the scheduled checks' hour, and ahead of real time so sessions are valid.
  const now = new Date();
  const clock = new ManualClock(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1, 5)));
  const s = await buildTestApp(t, { clock, env: { ...CAMPAIGN_ENV, MAILPATH_CONFIG__WORKERS__HEALTH_CHECKS__MIN_SENDS_FOR_RATES: '1' } });
  const admin = await superAdminToken(s.app);
  const snd = await sender(s);
  const url = `/admin/tenants/${snd.tenant.tenantId}/health-checks`;

  const first = await call(s.app, 'POST', `${url}/run-now`, { token: admin });
  t.equal(first.status, 200);
  t.match(first.body.data, { triggered: true, verdict: 'pass', run: { trigger: 'run_now', verdict: 'pass' } });
  t.type(first.body.data.elapsed_ms, 'number');
  t.same(
    first.body.data.run.checks.map((c: { name: string; status: string }) => [c.name, c.status]),
    [
      ['dns_verified', 'pass'],
      ['bounce_rate', 'pass'],
      ['complaint_rate', 'pass'],
      ['quota', 'pass'],
      ['webhook_dead_letters', 'pass'],
    ],
  );

  // The domain's records disappear (the drift check marks it) and a webhook delivery is dead-lettered.
  await s.sql`update domains set drifted_at = ${clock.now()} where tenant_id = ${snd.tenant.tenantId}`;
  clock.advance(60_000);
  const second = await call(s.app, 'POST', `${url}/run-now`, { token: admin });
  t.equal(second.body.data.verdict, 'fail', 'a drifted domain fails the run');
  const dns = second.body.data.run.checks.find((c: { name: string }) => c.name === 'dns_verified');
  t.match(dns, { status: 'fail', value: 1, detail: new RegExp(snd.domain.name.replace(/\./g, '\\.')) });

  const list = await call(s.app, 'GET', url, { token: admin });
  t.equal(list.status, 200);
  t.match(list.body.data, { tenant_id: snd.tenant.tenantId, limit: 30, count: 2 });
  t.same(
    list.body.data.items.map((r: { id: string }) => r.id),
    [second.body.data.run.id, first.body.data.run.id],
    'newest first',
  );
  t.match((await call(s.app, 'GET', `${url}?limit=0`, { token: admin })).body.data, { limit: 1, count: 1 }, 'limit 0 clamps to 1');
  t.match((await call(s.app, 'GET', `${url}?limit=5000`, { token: admin })).body.data, { limit: 200, count: 2 }, 'limit 5000 clamps to 200');
  t.match((await call(s.app, 'GET', `${url}?limit=abc`, { token: admin })).body.data, { limit: 30 }, 'a limit that is no number takes the default');

  const audit = await s.sql`select metadata from audit_events where tenant_id = ${snd.tenant.tenantId} and action = 'tenant.health_check_run' order by id`;
  t.equal(audit.length, 2, 'each run-now audited');
  t.match(audit[1]!.metadata, { verdict: 'fail', run_id: second.body.data.run.id });
  t.equal((await call(s.app, 'POST', `/admin/tenants/${UNKNOWN}/health-checks/run-now`, { token: admin })).status, 404);
  t.equal((await call(s.app, 'GET', `/admin/tenants/${UNKNOWN}/health-checks`, { token: admin })).status, 404);
});

t.test('POST /admin/tenants/{id}/digest/run-now posts to the chat webhook through the queue, ignoring its gates', async (t) => {
  const chat = await startWebhookReceiver(t);
  const s = await buildTestApp(t, { env: { MAILPATH_CHAT_WEBHOOK_URL: chat.url } });
  const admin = await superAdminToken(s.app);
  const tenant = await registerTenant(s.app, { tenant_name: 'Digest Co' });
  const url = `/admin/tenants/${tenant.tenantId}/digest/run-now`;

  const res = await call(s.app, 'POST', url, { token: admin });
  t.equal(res.status, 200);
  t.match(res.body.data, { triggered: true, delivery: 'queued' });
  t.type(res.body.data.elapsed_ms, 'number');
  t.equal(chat.requests.length, 0, 'the request only queued it');
  const again = await call(s.app, 'POST', url, { token: admin });
  t.equal(again.body.data.delivery, 'queued', 'run-now ignores the once-a-day gate');

  const notifier = await startChatNotifier(s.ctx);
  t.teardown(() => notifier.stop());
  const requests = await pollUntil('both digests posted', () => (chat.requests.length >= 2 ? chat.requests : undefined), 20_000);
  const text = JSON.parse(requests[0]!.body.toString()).text as string;
  t.match(text, /daily digest for Digest Co/);
  t.match(text, /0 live sends in 24 h/);
  t.match(text, /health not checked yet/);
  const [row] = await s.sql<{ at: Date | null }[]>`select digest_last_posted_at as at from tenants where id = ${tenant.tenantId}`;
  t.ok(row!.at, 'digest_last_posted_at set');
  t.equal((await s.sql`select 1 from audit_events where tenant_id = ${tenant.tenantId} and action = 'tenant.digest_posted'`).length, 2, 'audited');
  t.equal((await call(s.app, 'POST', `/admin/tenants/${UNKNOWN}/digest/run-now`, { token: admin })).status, 404);
});

t.test('digest run-now without a chat notifier logs only', async (t) => {
  const s = await buildTestApp(t);
  const admin = await superAdminToken(s.app);
  const tenant = await registerTenant(s.app);
  const res = await call(s.app, 'POST', `/admin/tenants/${tenant.tenantId}/digest/run-now`, { token: admin });
  t.equal(res.status, 200);
  t.equal(res.body.data.delivery, 'logged');
  t.equal((await s.sql`select 1 from pgboss.job where name = 'notify.chat'`).length, 0, 'nothing queued');
});
