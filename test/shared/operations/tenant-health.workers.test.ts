// The daily tenant workers on an injected clock: health checks from 06:00 UTC once a day, the digest from 09:00 IST once a day to a real chat webhook; a
// broken database probe yields null alone; a missing worker is 503.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { AppError } from '../../../shared/kernel/errors.js';
import { CHAT_JOBS } from '../../../shared/operations/notify/chat.js';
import { dbHealth, DB_HEALTH_PROBES } from '../../../shared/operations/tenant-health/db-health.js';
import { digestDayStart, digestGateOpen, runDailyDigests } from '../../../shared/operations/tenant-health/digest.js';
import { runDailyHealthChecks } from '../../../shared/operations/tenant-health/runs.js';
import { findWorker, requireWorker, runWorker, TENANT_DIGEST_WORKER, TENANT_HEALTH_WORKER } from '../../../shared/operations/workers/catalog.js';
import { buildTestApp, registerTenant } from '../../helpers/app.js';

const day = (d: number, h: number, m = 0) => new Date(Date.UTC(2031, 4, d, h, m));

t.test('health checks: nothing before 06:00 UTC, every tenant once from 06:00, again the next day', async (t) => {
  const clock = new ManualClock(new Date());
  const s = await buildTestApp(t, { clock });
  const a = await registerTenant(s.app);
  const b = await registerTenant(s.app);
  const deps = { ...s.ctx, clock };
  const runs = async (tenantId: string) => (await s.sql`select trigger from tenant_health_checks where tenant_id = ${tenantId}`).length;

  clock.set(day(10, 5, 59));
  t.match(await runDailyHealthChecks(deps), { skipped: 'before 06:00 UTC', checked: 0 });
  t.equal(await runs(a.tenantId), 0, 'the gate holds before 06:00 UTC');

  clock.set(day(10, 6, 0));
  t.match(await runDailyHealthChecks(deps), { checked: 2, errors: 0 }, 'both tenants, not the platform’s own');
  t.equal(await runs(a.tenantId), 1);
  t.equal(await runs(b.tenantId), 1);
  const [platform] = await s.sql<
    { n: number }[]
  >`select count(*)::int as n from tenant_health_checks h join tenants t on t.id = h.tenant_id where t.is_super_admin`;
  t.equal(platform!.n, 0);

  clock.set(day(10, 7, 0));
  t.match(await runDailyHealthChecks(deps), { checked: 0 }, 'once a day: the 07:00 tick finds nothing due');
  const c = await registerTenant(s.app);
  clock.set(day(10, 8, 0));
  t.match(await runDailyHealthChecks(deps), { checked: 1 }, 'a tenant new today is caught up at the next tick');
  t.equal(await runs(c.tenantId), 1);

  clock.set(day(11, 6, 0));
  t.match(await runDailyHealthChecks(deps), { checked: 3 }, 'the next day at 06:00: everyone again');

  // Through the catalog, as the schedule and /admin/workers/{name}/run-now run it: the tick is recorded.
  clock.set(day(11, 3, 0));
  const tick = await runWorker(deps, findWorker(TENANT_HEALTH_WORKER)!);
  t.match(tick, { outcome: 'ok', result: { skipped: 'before 06:00 UTC' } });
});

t.test('digest: from 09:00 IST (03:30 UTC), once a day, queued for the chat', async (t) => {
  t.equal(digestDayStart(day(10, 3, 30)).toISOString(), day(10, 3, 30).toISOString(), '09:00 IST is 03:30 UTC');
  t.equal(digestDayStart(day(10, 3, 29)).toISOString(), day(9, 3, 30).toISOString(), 'a minute before: the previous digest day');
  t.equal(digestGateOpen(day(10, 3, 29)), false);
  t.equal(digestGateOpen(day(10, 3, 30)), true);
  t.equal(digestGateOpen(day(10, 18, 29)), true, '23:59 IST');
  t.equal(digestGateOpen(day(10, 18, 30)), false, '00:00 IST the next day');

  const clock = new ManualClock(new Date());
  const s = await buildTestApp(t, { clock, env: { MAILPATH_CHAT_WEBHOOK_URL: 'http://127.0.0.1:9/chat' } });
  const active = await registerTenant(s.app, { tenant_name: 'Active' });
  const quiet = await registerTenant(s.app, { tenant_name: 'Quiet' });
  const worrying = await registerTenant(s.app, { tenant_name: 'Worrying' });
  const deps = { ...s.ctx, clock };
  await s.sql`
    insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
    values (${randomUUID()}, ${active.tenantId}, 'api', 'live', 'delivered', 'a@x.example', 'b@y.example', 'Hi', ${`${randomUUID()}@x.example`},
            'bounce@x.example', ${day(10, 1)}, ${day(10, 1)})`;
  await s.sql`insert into tenant_health_checks (tenant_id, ran_at, trigger, verdict, checks)
              values (${worrying.tenantId}, ${day(10, 1)}, 'schedule', 'fail', '[]')`;
  const texts = async () =>
    (await s.sql<{ text: string }[]>`select data->>'text' as text from pgboss.job where name = ${CHAT_JOBS} order by created_on`).map((r) => r.text);

  clock.set(day(10, 3, 0));
  t.match(await runDailyDigests(deps), { skipped: 'before 09:00 IST', posted: 0 });
  t.same(await texts(), [], 'the gate holds before 09:00 IST');

  clock.set(day(10, 3, 30));
  t.match(await runDailyDigests(deps), { posted: 2, due: 2 });
  const posted = await texts();
  t.equal(posted.length, 2);
  t.ok(posted.some((x) => /digest for Active/.test(x)));
  t.ok(
    posted.some((x) => /digest for Worrying .*health fail/.test(x)),
    'a failing health verdict makes a tenant due and shows',
  );
  t.notOk(
    posted.some((x) => /Quiet/.test(x)),
    'a quiet, healthy tenant is left out',
  );
  t.ok(quiet);

  clock.set(day(10, 4, 0));
  t.match(await runDailyDigests(deps), { posted: 0 }, 'once per digest day: digest_last_posted_at holds');
  clock.set(day(11, 3, 0));
  t.match(await runDailyDigests(deps), { posted: 0, skipped: 'before 09:00 IST' });
  clock.set(day(11, 3, 30));
  t.match(await runDailyDigests(deps), { posted: 1 }, 'the next day at 09:00 IST: Worrying (still failing) again; Active sent nothing in 24 h');
});

t.test('db health: a probe that fails yields null for its field alone', async (t) => {
  const s = await buildTestApp(t);
  const broken = { ...DB_HEALTH_PROBES, db_size_mb: async () => (await s.sql`select size_mb from no_such_table`)[0]!.size_mb as number };
  const h = await dbHealth(s.ctx, broken);
  t.equal(h.db_size_mb, null, 'the broken probe: null');
  t.ok(typeof h.connections_active === 'number' && h.connections_active >= 1, 'the others still answer');
  t.equal(h.replication_lag_s, 0);
});

t.test('a run-now route’s worker missing from the catalog is 503 worker_unavailable', async (t) => {
  t.equal(requireWorker(TENANT_HEALTH_WORKER).name, TENANT_HEALTH_WORKER);
  t.equal(requireWorker(TENANT_DIGEST_WORKER).name, TENANT_DIGEST_WORKER);
  const err = (() => {
    try {
      requireWorker(TENANT_HEALTH_WORKER, []);
    } catch (e) {
      return e;
    }
  })();
  t.ok(err instanceof AppError);
  t.match(err, { slug: 'worker_unavailable', status: 503 });
});
