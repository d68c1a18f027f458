// Worker env gates and streaks: a worker an env flag keeps off is skipped (recorded, env_gate_active) without touching its failing streak; the alert
// threshold counts only failures; alertFor's rules.
import t from 'tap';
import { runWorker, type ScheduledWorker } from '../../../../shared/operations/workers/catalog.js';
import { alertFor } from '../../../../shared/operations/workers/alerts.js';
import { workerStatuses } from '../../../../shared/operations/workers/status.js';
import { buildTestApp } from '../../../helpers/app.js';

t.test('alertFor: once when the streak reaches N, recovery only after an alert', async (t) => {
  const c = { alert_after_failures: 3, notify_recovery: true };
  t.equal(alertFor(c, 'error', { before: 1, after: 2 }), null);
  t.equal(alertFor(c, 'error', { before: 2, after: 3 }), 'failing');
  t.equal(alertFor(c, 'error', { before: 3, after: 4 }), null, 'the same streak does not alert again');
  t.equal(alertFor(c, 'ok', { before: 2, after: 0 }), null, 'no alert was raised: nothing to recover from');
  t.equal(alertFor(c, 'ok', { before: 5, after: 0 }), 'recovered');
  t.equal(alertFor({ ...c, notify_recovery: false }, 'ok', { before: 5, after: 0 }), null);
  t.equal(alertFor(c, 'skipped', { before: 3, after: 3 }), null);
  t.equal(alertFor({ ...c, alert_after_failures: 1 }, 'error', { before: 0, after: 1 }), 'failing');
});

t.test('an env-gated worker: skipped while its flag is off, run when on; a skipped tick leaves the failing streak alone', async (t) => {
  const { ctx, sql } = await buildTestApp(t, { env: { MAILPATH_CONFIG__WORKERS__ALERT_AFTER_FAILURES: '3' } });
  let enabled = false;
  let runs = 0;
  const gated: ScheduledWorker = {
    name: 'evidence-test',
    description: 'A worker gated by SOC2_EVIDENCE_ENABLED, failing whenever it runs.',
    intervalMinutes: () => 60,
    envGate: { variable: 'SOC2_EVIDENCE_ENABLED', enabled: () => enabled },
    run: async () => {
      runs++;
      throw new Error('evidence store unreachable');
    },
  };
  const status = async () => (await workerStatuses(ctx, [gated]))[0]!;

  t.match(await status(), { name: 'evidence-test', env_gate: 'SOC2_EVIDENCE_ENABLED', env_gate_active: true, last_tick_at: null, consecutive_failures: 0 });
  t.match(await runWorker(ctx, gated), { outcome: 'skipped', result: { skipped: 'SOC2_EVIDENCE_ENABLED is off' }, error: null });
  t.equal(runs, 0, 'its work did not run');
  t.match(await status(), { last_tick_outcome: 'skipped', last_tick_at: Date, consecutive_failures: 0 });

  enabled = true;
  t.match(await status(), { env_gate_active: false });
  for (let i = 0; i < 2; i++) t.match(await runWorker(ctx, gated), { outcome: 'error', error: 'evidence store unreachable' });
  enabled = false;
  await runWorker(ctx, gated);
  t.match(await status(), { last_tick_outcome: 'skipped', consecutive_failures: 2, last_alert_event: null }, 'skipped: the streak stays at 2');
  enabled = true;
  await runWorker(ctx, gated);
  t.equal(runs, 3);
  t.match(await status(), { last_tick_outcome: 'error', consecutive_failures: 3, last_alert_event: 'failing', last_alert_at: Date });
  const [audit] = await sql`select metadata from audit_events where action = 'worker.alert' and resource_id = 'evidence-test'`;
  t.match(audit, { metadata: { event: 'failing', consecutive_failures: 3 } });
});

t.test("the next tick estimate comes from the worker's schedule", async (t) => {
  const { ctx } = await buildTestApp(t, { clock: { now: () => new Date('2030-05-01T10:07:00Z') } });
  const statuses = await workerStatuses(ctx);
  t.same(statuses.find((s) => s.name === 'idempotency-purge')?.next_tick_estimate, new Date('2030-05-01T11:00:00Z'));
  t.same(statuses.find((s) => s.name === 'ip-quarantine-expiry')?.next_tick_estimate, new Date('2030-05-01T10:10:00Z'));
  t.same(statuses.find((s) => s.name === 'best-send-hour')?.next_tick_estimate, new Date('2030-05-02T00:00:00Z'));
});
