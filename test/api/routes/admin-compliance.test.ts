// Super-admin compliance: chain verification names a tampered row; the SOC 2 evidence worker's gates on an injected clock (02:00 UTC, once a day, run-now
// past both, the env flag), dates/today/{date} and their status codes; a tenant's seven controls, with no made-up values.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { CONTROL_NAMES } from '../../../shared/operations/compliance/tenant-controls.js';
import { findWorker, runWorker } from '../../../shared/operations/workers/catalog.js';
import { buildTestApp, call, registerTenant, superAdminToken } from '../../helpers/app.js';

const ADMIN_URLS: ['GET' | 'POST', string][] = [
  ['GET', '/admin/audit/verify'],
  ['GET', '/admin/compliance/soc2/dates'],
  ['POST', '/admin/compliance/soc2/run-now'],
  ['GET', '/admin/compliance/soc2/today'],
  ['GET', '/admin/compliance/soc2/2026-05-04'],
];

t.test('with SOC2_EVIDENCE_ENABLED unset: no dates, no packs, run-now 503; super-admin only', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const tenant = await registerTenant(app);
  for (const [method, url] of [...ADMIN_URLS, ['GET', `/admin/tenants/${tenant.tenantId}/soc2-evidence`] as ['GET', string]]) {
    t.equal((await call(app, method, url, { token: tenant.token })).status, 403, `${method} ${url}: a tenant user is refused`);
  }
  t.same((await call(app, 'GET', '/admin/compliance/soc2/dates', { token: admin })).body.data, { dates: [] });
  const run = await call(app, 'POST', '/admin/compliance/soc2/run-now', { token: admin });
  t.equal(run.status, 503);
  t.equal(run.body.error, 'worker_unavailable');
  t.equal((await call(app, 'GET', '/admin/compliance/soc2/today', { token: admin })).status, 404);
  const tick = await runWorker(app.ctx, findWorker('soc2-evidence')!);
  t.equal(tick.outcome, 'skipped', 'the scheduled tick is gated off');
  t.equal((await sql`select 1 from soc2_evidence_packs`).length, 0);
});

t.test('the evidence worker: 02:00 UTC hour gate, once a day, run-now past both gates and overwriting', async (t) => {
  const clock = new ManualClock(new Date('2026-05-04T01:30:00Z'));
  const { app, sql, ctx } = await buildTestApp(t, { clock, env: { SOC2_EVIDENCE_ENABLED: '1' } });
  let admin = await superAdminToken(app);
  const worker = findWorker('soc2-evidence')!;
  t.equal(worker.offsetMinutes, 120, 'scheduled daily at 02:00 UTC');
  t.equal(worker.intervalMinutes(ctx), 1440);

  let tick = await runWorker(ctx, worker);
  t.match(tick, { outcome: 'ok', result: { written: false, skipped: /before 2:00 UTC/ } }, 'before 02:00 nothing is written');
  t.same((await call(app, 'GET', '/admin/compliance/soc2/dates', { token: admin })).body.data, { dates: [] });
  t.equal((await call(app, 'GET', '/admin/compliance/soc2/today', { token: admin })).status, 404);

  clock.set(new Date('2026-05-04T02:00:00Z'));
  tick = await runWorker(ctx, worker);
  t.match(tick.result, { written: true, date: '2026-05-04' });
  const today = await call(app, 'GET', '/admin/compliance/soc2/today', { token: admin });
  t.equal(today.status, 200);
  t.match(today.body.data, {
    date: '2026-05-04',
    generated_at: '2026-05-04T02:00:00.000Z',
    errors: [],
    access_reviews: { super_admins: 1, users_by_role: Object, privileged_without_2fa: Number, active_api_keys: Number },
    change_management: { changes: Object },
    incident_response: { events: Object },
    suppression_discipline: { suppressions: Number },
    auth_events: { locked_accounts: 0, events: Object },
  });

  clock.set(new Date('2026-05-04T05:00:00Z'));
  tick = await runWorker(ctx, worker);
  t.match(tick.result, { written: false, skipped: /already written/ }, 'once a day');
  t.equal((await call(app, 'GET', '/admin/compliance/soc2/today', { token: admin })).body.data.generated_at, '2026-05-04T02:00:00.000Z');

  const now = await call(app, 'POST', '/admin/compliance/soc2/run-now', { token: admin });
  t.equal(now.status, 200);
  t.match(now.body.data, { triggered: true, elapsed_ms: Number, artifact: { date: '2026-05-04', generated_at: '2026-05-04T05:00:00.000Z' } });
  t.equal(
    (await call(app, 'GET', '/admin/compliance/soc2/today', { token: admin })).body.data.generated_at,
    '2026-05-04T05:00:00.000Z',
    "run-now overwrites today's pack",
  );
  const [audit] = await sql`select actor_type, resource_id from audit_events where action = 'compliance.soc2_run_now'`;
  t.match(audit, { actor_type: 'user', resource_id: '2026-05-04' }, 'run-now is audited');

  clock.set(new Date('2026-05-05T00:30:00Z'));
  admin = await superAdminToken(app); // the session of yesterday has expired
  t.equal((await call(app, 'POST', '/admin/compliance/soc2/run-now', { token: admin })).status, 200, 'run-now ignores the hour gate');
  t.same((await call(app, 'GET', '/admin/compliance/soc2/dates', { token: admin })).body.data, { dates: ['2026-05-05', '2026-05-04'] }, 'newest first');
  const byDate = await call(app, 'GET', '/admin/compliance/soc2/2026-05-04', { token: admin });
  t.equal(byDate.status, 200);
  t.equal(byDate.body.data.date, '2026-05-04');
  // Well-shaped but impossible days were a 500 (an Invalid Date reached toISOString) or rolled over (02-30 → 03-02).
  for (const bad of ['2026-5-4', '2026-02-30', '2026-13-45', '2026-00-10', '2026-12-32', '2026-04-31', 'yesterday', '2026-05-04T00:00:00Z']) {
    const res = await call(app, 'GET', `/admin/compliance/soc2/${bad}`, { token: admin });
    t.equal(res.status, 400, `${bad}: 400`);
    t.equal(res.body.error, 'bad_request');
  }
  t.equal((await call(app, 'GET', '/admin/compliance/soc2/2026-05-03', { token: admin })).status, 404, 'a day without a pack');

  // The pack cannot be stored: the run fails, 502, and the tick is on record as an error.
  await sql`alter table soc2_evidence_packs rename to soc2_evidence_packs_away`;
  t.teardown(() => sql`alter table if exists soc2_evidence_packs_away rename to soc2_evidence_packs`.catch(() => {}));
  const failed = await call(app, 'POST', '/admin/compliance/soc2/run-now', { token: admin });
  t.equal(failed.status, 502);
  t.equal(failed.body.error, 'worker_failed');
  await sql`alter table soc2_evidence_packs_away rename to soc2_evidence_packs`;
  const [tickRow] = await sql`select last_tick_outcome from worker_ticks where name = 'soc2-evidence'`;
  t.equal(tickRow!['last_tick_outcome'], 'error');
});

t.test("chain verification and a tenant's controls: a tampered row is named and turns the control red", async (t) => {
  const clock = new ManualClock(new Date('2026-05-04T12:00:00Z'));
  const { app, sql } = await buildTestApp(t, { clock });
  const admin = await superAdminToken(app);
  const tenant = await registerTenant(app);

  const verify = await call(app, 'GET', '/admin/audit/verify', { token: admin });
  t.equal(verify.status, 200);
  t.match(verify.body.data, { intact: true, broken_at: null, broken_seq: null, reason: null });
  t.ok(verify.body.data.rows >= 2, 'bootstrap and registration rows chained and verified');

  // Two failed sign-ins on the tenant's owner.
  for (let i = 0; i < 2; i++) await call(app, 'POST', '/auth/login', { body: { email: tenant.email, password: 'Wrong-password-1' } });

  let res = await call(app, 'GET', `/admin/tenants/${tenant.tenantId}/soc2-evidence`, { token: admin });
  t.equal(res.status, 200);
  t.match(res.body.data, { tenant_id: tenant.tenantId, as_of: '2026-05-04T12:00:00.000Z' });
  const controls = res.body.data.controls;
  t.same(Object.keys(controls).sort(), [...CONTROL_NAMES].sort(), 'the seven controls');
  for (const name of ['encryption_at_rest', 'tls_only_ingress', 'backup_success_last_24h', 'last_restore_drill']) {
    t.equal(controls[name].status, 'yellow', `${name}: no data, yellow`);
    t.notOk('value' in controls[name], `${name}: no made-up value`);
    t.match(controls[name].note, /\w/);
  }
  t.match(controls.admin_mfa_coverage_pct, { status: 'red', value: 0, note: /0 of 1/ }, 'the owner has no second factor');
  t.match(controls.audit_log_hash_chain_intact, { status: 'green', value: true });
  t.match(controls.suspicious_activity_last_24h, { status: 'yellow', value: 2 });

  const [row] = await sql<
    { id: string; chain_seq: string }[]
  >`select id, chain_seq from audit_events where action = 'tenant.registered' and tenant_id = ${tenant.tenantId}`;
  await sql`update audit_events set metadata = metadata || '{"tampered": true}' where id = ${row!.id}`;
  const broken = await call(app, 'GET', '/admin/audit/verify', { token: admin });
  t.match(broken.body.data, { intact: false, broken_at: row!.id, broken_seq: row!.chain_seq, reason: /hash does not match/ });
  res = await call(app, 'GET', `/admin/tenants/${tenant.tenantId}/soc2-evidence`, { token: admin });
  t.match(res.body.data.controls.audit_log_hash_chain_intact, { status: 'red', value: false, note: new RegExp(`row ${row!.id}`) });

  t.equal((await call(app, 'GET', '/admin/tenants/00000000-0000-4000-8000-000000000000/soc2-evidence', { token: admin })).status, 404);
  t.equal((await call(app, 'GET', '/admin/tenants/nope/soc2-evidence', { token: admin })).status, 404);
});
