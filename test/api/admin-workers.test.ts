// /admin/workers and run-now: ticks recorded with outcome and duration, a failing tick answers 502 and is recorded as an error.
import t from 'tap';
import { buildTestApp, call, registerTenant, superAdminToken } from '../helpers/app.js';
import { startDnsServer } from '../helpers/dns-server.js';

t.test('run-now records the tick; a failing tick is 502 worker_failed and recorded as an error', async (t) => {
  const dns = await startDnsServer(t);
  const { app, sql } = await buildTestApp(t, { env: { MAILPATH_DNS_SERVERS: dns.address, MAILPATH_PUBLIC_RESOLVERS: dns.address } });
  const admin = await superAdminToken(app);

  let list = await call(app, 'GET', '/admin/workers', { token: admin });
  t.equal(list.status, 200);
  for (const w of list.body.data.items) {
    t.match(w, { last_tick_at: null, last_tick_outcome: null, env_gate_active: false, last_alert_at: null, last_alert_event: null });
    t.ok(Date.parse(w.next_tick_estimate) > Date.now(), `${w.name}: next tick in the future`);
  }

  const ok = await call(app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin });
  t.equal(ok.status, 200);
  t.match(ok.body.data, { triggered: true, outcome: 'ok', elapsed_ms: Number, result: { checked: 0, activated: 0, autoStarted: 0 } });

  // Break the worker's own query: the tick fails, the API says so, and the failure is on record.
  await sql`alter table dkim_rotations rename to dkim_rotations_away`;
  t.teardown(() => sql`alter table if exists dkim_rotations_away rename to dkim_rotations`.catch(() => {}));
  const failed = await call(app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin });
  t.equal(failed.status, 502);
  t.equal(failed.body.error, 'worker_failed');
  t.match(failed.body.message, /dkim-rotator failed/);
  await sql`alter table dkim_rotations_away rename to dkim_rotations`;

  list = await call(app, 'GET', '/admin/workers', { token: admin });
  const rotator = list.body.data.items.find((w: { name: string }) => w.name === 'dkim-rotator');
  t.match(rotator, { last_tick_outcome: 'error', last_error: /dkim_rotations/, last_tick_duration_ms: Number, interval_minutes: 30 });

  const tenant = await registerTenant(app);
  t.equal((await call(app, 'GET', '/admin/workers', { token: tenant.token })).status, 403);
  t.equal((await call(app, 'GET', '/admin/workers')).status, 401);
  t.equal((await call(app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin, body: { now: true } })).status, 400, 'takes no body');
});

t.test('idempotency-purge deletes answers older than 24 hours and keeps younger ones', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const tenant = await registerTenant(app);
  await sql`insert into idempotency_keys (tenant_id, key, request_hash, status, response, created_at) values
    (${tenant.tenantId}, 'old', 'h', 202, '{}', now() - interval '25 hours'),
    (${tenant.tenantId}, 'young', 'h', 202, '{}', now() - interval '23 hours')`;
  const res = await call(app, 'POST', '/admin/workers/idempotency-purge/run-now', { token: admin });
  t.equal(res.status, 200);
  t.match(res.body.data, { outcome: 'ok', result: { deleted: 1 } });
  t.same((await sql<{ key: string }[]>`select key from idempotency_keys`).map((r) => r.key), ['young']);
});
