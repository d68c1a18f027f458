// /admin/workers and run-now: every worker with its fields, ticks recorded with outcome and duration (run-now audited), a failing tick answers 502 and is
// recorded as an error, N failures in a row alert once (chat webhook included) and the recovery is announced.
import t from 'tap';
import { startChatNotifier } from '../../../jobs/chat-notifier.js';
import { CHAT_JOBS } from '../../../shared/operations/notify/chat.js';
import { WORKERS } from '../../../shared/operations/workers/catalog.js';
import { buildTestApp, call, registerTenant, superAdminToken } from '../../helpers/app.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { pollUntil } from '../../helpers/smtp-sink.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';

t.test('run-now records the tick; a failing tick is 502 worker_failed and recorded as an error', async (t) => {
  const dns = await startDnsServer(t);
  const { app, sql } = await buildTestApp(t, { env: { MAILPATH_DNS_SERVERS: dns.address, MAILPATH_PUBLIC_RESOLVERS: dns.address } });
  const admin = await superAdminToken(app);

  let list = await call(app, 'GET', '/admin/workers', { token: admin });
  t.equal(list.status, 200);
  const names = list.body.data.items.map((w: { name: string }) => w.name);
  t.same(names, WORKERS.map((w) => w.name).sort(), 'every scheduled worker, sorted by name');
  t.ok(names.includes('ip-quarantine-expiry'), "the IP watchdog's expiry worker among them");
  for (const w of list.body.data.items) {
    // The SOC 2 evidence worker is the one with an env gate, off in tests unless SOC2_EVIDENCE_ENABLED is set.
    const gated = w.name === 'soc2-evidence';
    t.match(w, {
      last_tick_at: null,
      last_tick_outcome: null,
      last_tick_duration_ms: null,
      consecutive_failures: 0,
      env_gate: gated ? 'SOC2_EVIDENCE_ENABLED' : null,
      env_gate_active: gated,
      last_alert_at: null,
      last_alert_event: null,
    });
    t.ok(Date.parse(w.next_tick_estimate) > Date.now(), `${w.name}: next tick in the future`);
  }

  const ok = await call(app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin });
  t.equal(ok.status, 200);
  t.match(ok.body.data, { triggered: true, outcome: 'ok', elapsed_ms: Number, result: { checked: 0, activated: 0, autoStarted: 0 } });
  const [audit] = await sql`select actor_type, action, resource_id, metadata from audit_events where action = 'worker.run_now'`;
  t.match(audit, { actor_type: 'user', resource_id: 'dkim-rotator', metadata: { outcome: 'ok' } }, 'run-now is audited');

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
  t.match(rotator, { last_tick_outcome: 'error', last_error: /dkim_rotations/, last_tick_duration_ms: Number, interval_minutes: 30, consecutive_failures: 1 });

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
  t.same(
    (await sql<{ key: string }[]>`select key from idempotency_keys`).map((r) => r.key),
    ['young'],
  );
});

t.test('N failed ticks in a row raise one alert (audit row, last_alert_*, chat webhook); fewer do not; a success after it is announced', async (t) => {
  const chat = await startWebhookReceiver(t);
  const dns = await startDnsServer(t);
  const { app, sql, ctx } = await buildTestApp(t, {
    env: {
      MAILPATH_DNS_SERVERS: dns.address,
      MAILPATH_PUBLIC_RESOLVERS: dns.address,
      MAILPATH_CHAT_WEBHOOK_URL: chat.url,
      MAILPATH_CONFIG__WORKERS__ALERT_AFTER_FAILURES: '3',
    },
  });
  const notifier = await startChatNotifier(ctx);
  t.teardown(() => notifier.stop());
  const admin = await superAdminToken(app);
  const rotator = async () =>
    (await call(app, 'GET', '/admin/workers', { token: admin })).body.data.items.find((w: { name: string }) => w.name === 'dkim-rotator');
  const chatJobs = async () => (await sql<{ n: number }[]>`select count(*)::int as n from pgboss.job where name = ${CHAT_JOBS}`)[0]!.n;
  const alerts = () => sql<{ actor_type: string; resource_id: string; metadata: Record<string, unknown> }[]>`
    select actor_type, resource_id, metadata from audit_events where action = 'worker.alert' order by id`;

  await sql`alter table dkim_rotations rename to dkim_rotations_away`;
  t.teardown(() => sql`alter table if exists dkim_rotations_away rename to dkim_rotations`.catch(() => {}));
  for (let i = 1; i <= 2; i++) t.equal((await call(app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin })).status, 502);
  t.match(await rotator(), { consecutive_failures: 2, last_alert_at: null, last_alert_event: null }, 'two failures: no alert');
  t.equal((await alerts()).length, 0);
  t.equal(await chatJobs(), 0, 'nothing queued for the chat');

  t.equal((await call(app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin })).status, 502);
  t.match(await rotator(), { consecutive_failures: 3, last_alert_at: String, last_alert_event: 'failing' });
  t.match(await alerts(), [
    { actor_type: 'system', resource_id: 'dkim-rotator', metadata: { event: 'failing', consecutive_failures: 3, last_error: /dkim_rotations/ } },
  ]);
  const [alert] = await pollUntil('the alert at the chat webhook', () => (chat.requests.length >= 1 ? chat.requests : undefined));
  t.equal(alert!.method, 'POST');
  t.match(alert!.headers['content-type'], /application\/json/);
  t.match(JSON.parse(alert!.body.toString()), { text: /worker dkim-rotator has failed 3 ticks in a row; last error: .*dkim_rotations/ });

  t.equal((await call(app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin })).status, 502);
  t.match(await rotator(), { consecutive_failures: 4, last_alert_event: 'failing' });
  t.equal((await alerts()).length, 1, 'one alert per failing streak');
  t.equal(await chatJobs(), 1);

  await sql`alter table dkim_rotations_away rename to dkim_rotations`;
  t.equal((await call(app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin })).status, 200);
  t.match(await rotator(), { consecutive_failures: 0, last_tick_outcome: 'ok', last_alert_event: 'recovered' });
  t.match((await alerts())[1], { metadata: { event: 'recovered', consecutive_failures: 4 } });
  const requests = await pollUntil('the recovery at the chat webhook', () => (chat.requests.length >= 2 ? chat.requests : undefined));
  t.match(JSON.parse(requests[1]!.body.toString()), { text: /worker dkim-rotator recovered: a tick succeeded after 4 failed ones/ });

  t.equal((await call(app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin })).status, 200);
  t.equal((await alerts()).length, 2, 'a further success announces nothing');
});
