// GET /admin/observability and /admin/observability/slow-queries: super-admin only, every section present, a broken section degraded and named, slow queries
// from Mailpath's own timing with clamped parameters.
import t from 'tap';
import { QueryTimings, timedSql } from '../../../shared/operations/observability/query-timing.js';
import { startTimingFlusher } from '../../../shared/operations/observability/timing-flusher.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';

const { app, sql, config } = await buildTestApp(t);
const admin = await superAdminToken(app);
const tenant = await registerTenant(app);

t.test('tenant users and API keys cannot read either report', async (t) => {
  const { key } = await createKey(app, tenant);
  for (const url of ['/admin/observability', '/admin/observability/slow-queries']) {
    t.equal((await call(app, 'GET', url, { token: tenant.token })).status, 403, `${url}: tenant owner`);
    t.equal((await call(app, 'GET', url, { token: key })).status, 403, `${url}: API key`);
    t.equal((await call(app, 'GET', url)).status, 401, `${url}: no credential`);
  }
});

t.test('the overview has every section', async (t) => {
  const res = await call(app, 'GET', '/admin/observability', { token: admin });
  t.equal(res.status, 200);
  const o = res.body.data;
  for (const section of ['tenants', 'domains', 'sends_24h', 'warmup', 'healthchecks', 'esp_scores', 'dns_drift', 'schema_drift', 'process', 'errors']) {
    t.ok(section in o, `${section} present`);
  }
  t.same(o.errors, []);
  t.ok(o.tenants.total >= 2, 'the super-admin tenant and the registered one');
  t.equal(o.tenants.active, o.tenants.total - o.tenants.suspended);
  t.equal(o.sends_24h.total, 0);
  t.equal(o.sends_24h.by_status.delivered, 0);
  t.same(o.healthchecks, { tenants_checked: 0, passing: 0, warning: 0, failing: 0, last_run_at: null }, 'no health check has run');
  t.same(o.esp_scores, [], 'no outcomes yet');
  t.equal(o.schema_drift.in_sync, true, 'every shipped migration applied');
  t.same(o.schema_drift.missing, []);
  t.equal(o.schema_drift.expected, o.schema_drift.applied);
  t.ok(o.process.uptime_s >= 0);
  t.ok(o.process.memory_mb.rss > 0);
  t.type(o.process.event_loop_delay_ms.p99, 'number');
});

t.test("health checks count each tenant's latest run by verdict; ESP scores cover every tenant's rolled-up outcomes", async (t) => {
  const other = await registerTenant(app);
  const older = new Date(Date.now() - 2 * 86_400_000);
  const newer = new Date(Date.now() - 3_600_000);
  await sql`insert into tenant_health_checks (tenant_id, ran_at, trigger, verdict, checks) values
    (${tenant.tenantId}, ${older}, 'schedule', 'fail', '[]'), (${tenant.tenantId}, ${newer}, 'run_now', 'warn', '[]'),
    (${other.tenantId}, ${older}, 'schedule', 'pass', '[]')`;
  // Outcomes as the rollup worker writes them, for two tenants at gmail.com (classified by name, no DNS needed).
  const hour = new Date(Math.floor((Date.now() - 2 * 3_600_000) / 3_600_000) * 3_600_000);
  await sql`insert into analytics_domain_hourly (tenant_id, hour, domain, sent, delivered, bounced, complained, engaged) values
    (${tenant.tenantId}, ${hour}, 'gmail.com', 600, 590, 10, 0, 300), (${other.tenantId}, ${hour}, 'gmail.com', 400, 400, 0, 0, 200)`;
  const o = (await call(app, 'GET', '/admin/observability', { token: admin })).body.data;
  t.same(o.errors, []);
  t.same(o.healthchecks, { tenants_checked: 2, passing: 1, warning: 1, failing: 0, last_run_at: newer.toISOString() }, 'the latest run of each tenant');
  t.equal(o.esp_scores.length, 1, 'only providers with outcomes');
  t.match(o.esp_scores[0], { provider: 'gmail', sample_size: 1000 });
  t.ok(o.esp_scores[0].score > 0 && o.esp_scores[0].score <= 100);
  await sql`delete from tenant_health_checks`;
  await sql`delete from analytics_domain_hourly`;
});

t.test('a section that fails shows its zero value and is named in errors; the others still answer', async (t) => {
  await sql`update tenants set status = 'suspended' where id = ${tenant.tenantId}`;
  // Broken on purpose: the warm-up section's table is gone for the length of one call.
  await sql`alter table domain_warmup rename to domain_warmup_hidden`;
  let res;
  try {
    res = await call(app, 'GET', '/admin/observability', { token: admin });
  } finally {
    await sql`alter table domain_warmup_hidden rename to domain_warmup`;
    await sql`update tenants set status = 'active' where id = ${tenant.tenantId}`;
  }
  t.equal(res.status, 200, 'the call succeeds');
  const o = res.body.data;
  t.same(o.warmup, { domains: 0, paused: 0, held: 0, by_tier: {} }, 'zero values');
  t.equal(o.errors.length, 1);
  t.equal(o.errors[0].section, 'warmup');
  t.match(o.errors[0].message, /domain_warmup/);
  t.ok(o.tenants.suspended >= 1, 'the tenants section still computed');
  t.equal(o.schema_drift.in_sync, true);
});

t.test("slow queries come from Mailpath's own timing when pg_stat_statements is not loaded", async (t) => {
  const timings = new QueryTimings({ windowMinutes: 5, maxStatementsPerWindow: 100, samplesPerStatement: 50 });
  const timed = timedSql(sql, timings);
  for (let i = 0; i < 5; i++) await timed`select pg_sleep(0.02), ${i}::int as n`;
  await timed.unsafe('select count(*) from tenants where status = $1', ['active']);
  await timed`select 1 as fast`;
  const flusher = startTimingFlusher(sql, timings, config.observability.query_timing, createLogger('silent'));
  await flusher.stop();

  const res = await call(app, 'GET', '/admin/observability/slow-queries', { token: admin });
  t.equal(res.status, 200);
  const r = res.body.data;
  t.equal(r.source, 'mailpath', 'no pg_stat_statements here');
  t.equal(r.error, null);
  t.equal(r.lookback_hours, 24, 'default lookback');
  t.equal(r.warn_ms, config.observability.slow_queries.warn_ms);
  t.equal(r.error_ms, config.observability.slow_queries.error_ms);
  t.ok(r.items.length >= 3 && r.items.length <= 10, 'default limit 10');
  const sleepy = r.items[0];
  t.equal(sleepy.query, 'select pg_sleep(0.02), $1::int as n', 'the slowest first, parameters as $n');
  t.equal(sleepy.calls, 5);
  t.ok(sleepy.p99_ms >= 19, `p99 ${sleepy.p99_ms} ms`);
  t.ok(sleepy.max_ms >= sleepy.p99_ms);
  t.equal(sleepy.level, 'ok');
  t.equal(sleepy.latest_window.calls, 5);
  t.equal(Date.parse(sleepy.latest_window.end) - Date.parse(sleepy.latest_window.start), 5 * 60_000, 'a 5-minute window');
  t.ok(
    r.items.some((i: { query: string }) => i.query === 'select count(*) from tenants where status = $1'),
    'unsafe statements (pg-boss) too',
  );
});

t.test('limit and hours out of range are clamped silently', async (t) => {
  const get = async (qs: string) => (await call(app, 'GET', `/admin/observability/slow-queries${qs}`, { token: admin })).body.data;
  t.equal((await get('?limit=0')).items.length, 1, 'limit 0 → 1');
  t.ok((await get('?limit=5000')).items.length <= 100, 'limit 5000 → 100');
  t.equal((await get('?hours=0')).lookback_hours, 1);
  t.equal((await get('?hours=100000')).lookback_hours, 168);
  t.equal((await get('?hours=-3&limit=-1')).lookback_hours, 1);
  t.equal((await get('?hours=48')).lookback_hours, 48);
});
