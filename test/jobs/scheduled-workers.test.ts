// Worker schedules: interval → cron and next tick, and scheduleWorkers on a real pg-boss (one schedule per worker, ticks worked and recorded).
import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { systemClock } from '../../shared/kernel/clock.js';
import { loadConfig } from '../../shared/config/index.js';
import { connect } from '../../shared/db/connection.js';
import { buildServices } from '../../main/services.js';
import { createLogger } from '../../shared/kernel/log.js';
import { startBoss } from '../../shared/jobs/boss.js';
import { intervalCron, nextTickAfter, WORKERS } from '../../shared/operations/workers/catalog.js';
import { scheduleWorkers } from '../../jobs/scheduled-workers.js';
import { listTicks } from '../../shared/operations/workers/ticks.js';
import { createTestDatabase } from '../helpers/db.js';
import { startDnsServer } from '../helpers/dns-server.js';

t.test('intervalCron: intervals dividing an hour, or whole hours dividing a day', async (t) => {
  t.equal(intervalCron(30), '*/30 * * * *');
  t.equal(intervalCron(1), '*/1 * * * *');
  t.equal(intervalCron(15), '*/15 * * * *');
  t.equal(intervalCron(60), '0 */1 * * *');
  t.equal(intervalCron(360), '0 */6 * * *');
  t.equal(intervalCron(720), '0 */12 * * *');
  t.equal(intervalCron(1440), '0 0 * * *');
  for (const minutes of [45, 420, 7, 90, 100, 300, 2880]) {
    t.throws(() => intervalCron(minutes), /neither divides an hour nor is whole hours dividing a day/, `${minutes} minutes`);
  }
});

t.test('nextTickAfter: the next aligned tick, strictly after', async (t) => {
  const at = (iso: string) => new Date(iso);
  t.same(nextTickAfter(30, at('2030-01-01T12:10:00Z')), at('2030-01-01T12:30:00Z'));
  t.same(nextTickAfter(30, at('2030-01-01T12:30:00Z')), at('2030-01-01T13:00:00Z'), 'on a tick: the one after');
  t.same(nextTickAfter(30, at('2030-01-01T12:29:59.999Z')), at('2030-01-01T12:30:00Z'));
  t.same(nextTickAfter(360, at('2030-01-01T05:59:00Z')), at('2030-01-01T06:00:00Z'));
  t.same(nextTickAfter(360, at('2030-01-01T18:00:00Z')), at('2030-01-02T00:00:00Z'), 'across midnight');
  t.same(nextTickAfter(1440, at('2030-01-01T00:00:00Z')), at('2030-01-02T00:00:00Z'));
  t.same(nextTickAfter(1440, at('2030-12-31T23:59:00Z')), at('2031-01-01T00:00:00Z'));
  t.same(nextTickAfter(1, at('2030-01-01T12:10:30Z')), at('2030-01-01T12:11:00Z'));
});

t.test('scheduleWorkers on a real pg-boss', async (t) => {
  const db = await createTestDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-workers-'));
  const dns = await startDnsServer(t);
  const log = createLogger('silent');
  const sql = connect(db.url, log, { max: 4 });
  const config = loadConfig({
    DATABASE_URL: db.url,
    MAILPATH_DATA_DIR: dataDir,
    MAILPATH_LOG_LEVEL: 'silent',
    MAILPATH_DNS_SERVERS: dns.address,
    MAILPATH_PUBLIC_RESOLVERS: dns.address,
    MAILPATH_CONFIG__DNS__TIMEOUT_MS: '150',
    MAILPATH_CONFIG__DNS__TRIES: '1',
    MAILPATH_CONFIG__DNS__DOMAIN_RECHECK_HOURS: '12',
    MAILPATH_CONFIG__DKIM__ROTATOR_INTERVAL_MINUTES: '15',
  });
  const boss = await startBoss(sql, log, { supervise: false });
  const deps = await buildServices({ config, sql, log, boss, clock: systemClock });
  t.teardown(async () => {
    await deps.close();
    await boss.stop({ graceful: false, wait: true });
    await sql.end({ timeout: 5 });
    await db.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const stop = await scheduleWorkers(boss, deps);

  t.test('one schedule per worker, with the interval from config, in UTC', async (t) => {
    const schedules = (await boss.getSchedules()).filter((s) => s.name.startsWith('worker.'));
    t.equal(schedules.length, WORKERS.length, 'one per worker');
    const byName = new Map(schedules.map((s) => [s.name, s as typeof s & { timezone?: string }]));
    t.same([...byName.keys()].sort(), WORKERS.map((w) => `worker.${w.name}`).sort());
    t.equal(byName.get('worker.dkim-rotator')?.cron, '*/15 * * * *', 'dkim.rotator_interval_minutes');
    t.equal(byName.get('worker.domain-recheck')?.cron, '0 */12 * * *', 'dns.domain_recheck_hours');
    for (const s of byName.values()) t.equal(s.timezone, 'UTC', `${s.name} in UTC`);
  });

  t.test('a tick sent by hand is worked and recorded in worker_ticks', async (t) => {
    const before = new Date();
    const jobId = await boss.send('worker.domain-recheck', {});
    t.type(jobId, 'string', 'the job was queued');
    let ticks = await listTicks(sql);
    // pg-boss polls every 2 s by default: wait up to 10 s, in 100 ms steps.
    for (let i = 0; i < 100 && !ticks.some((r) => r.name === 'domain-recheck'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      ticks = await listTicks(sql);
    }
    const tick = ticks.find((r) => r.name === 'domain-recheck');
    t.ok(tick, 'a worker_ticks row for domain-recheck');
    t.equal(tick?.last_tick_outcome, 'ok');
    t.equal(tick?.last_error, null);
    t.ok(tick!.last_tick_at.getTime() >= before.getTime() - 1000, 'recorded now');
    t.ok(tick!.last_tick_duration_ms >= 0);
    t.notOk(
      ticks.some((r) => r.name === 'dkim-rotator'),
      'only the worker that was sent a job ran',
    );

    let state: string | undefined;
    for (let i = 0; i < 50; i++) {
      state = (await boss.getJobById('worker.domain-recheck', jobId!))?.state;
      if (state === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.equal(state, 'completed', 'the job completes');
  });

  t.test('stopping returns', async (t) => {
    await t.resolves(stop());
  });

  t.test('scheduling again (a restart) replaces rather than duplicates', async (t) => {
    // After stop(): the stop function of a second registration would take the first one's handlers off too (offWork by queue name).
    const again = await scheduleWorkers(boss, deps);
    t.teardown(again);
    const schedules = (await boss.getSchedules()).filter((s) => s.name.startsWith('worker.'));
    t.equal(schedules.length, WORKERS.length);
  });
});
