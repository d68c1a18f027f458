// The delivery queue: due sends claimed oldest first and never by two workers, a claim as a lease that another worker
// takes over once it ends, reschedules and removal; and an upgrade moving pg-boss's pending delivery jobs into it.
import t from 'tap';
import { randomBytes, randomUUID } from 'node:crypto';
import postgres from 'postgres';
import { connect } from '../../../../shared/db/connection.js';
import { loadMigrations, migrate } from '../../../../shared/db/migrate.js';
import { startBoss } from '../../../../shared/jobs/boss.js';
import { readQueueDepths } from '../../../../shared/jobs/depth.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import {
  claimDueDeliveries,
  dequeueDeliveries,
  enqueueDeliveries,
  releaseDeliveries,
  rescheduleDelivery,
} from '../../../../shared/sending/outbound-log/delivery-queue.js';
import { ADMIN_URL } from '../../../helpers/db.js';
import { buildTestApp } from '../../../helpers/app.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const { sql } = await buildTestApp(t);
const tenantId = await insertTenant(sql);
const MIN = 60_000;

async function newSend(): Promise<string> {
  const id = randomUUID();
  await sql`
    insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, message, created_at, updated_at)
    values (${id}, ${tenantId}, 'api', 'live', 'queued', 'a@w.example', 'b@d.example', 's', ${`${id}@mx`}, 'b@mx', ${Buffer.from('m')}, now(), now())`;
  return id;
}

t.test('due sends are claimed oldest first, each by one worker, and leased until the claim ends', async (t) => {
  const now = new Date('2026-11-27T10:00:00Z');
  const ids = await Promise.all(Array.from({ length: 6 }, () => newSend()));
  await enqueueDeliveries(
    sql,
    ids.map((sendId, i) => ({ sendId, dueAt: new Date(now.getTime() - (6 - i) * MIN) })),
  );
  const later = await newSend();
  await enqueueDeliveries(sql, [{ sendId: later, dueAt: new Date(now.getTime() + 5 * MIN) }]);
  const lease = new Date(now.getTime() + 5 * MIN);
  // Two workers at once: every due send to exactly one of them, none not yet due.
  const [a, b] = await Promise.all([claimDueDeliveries(sql, 4, now, lease), claimDueDeliveries(sql, 4, now, lease)]);
  t.same([...a, ...b].sort(), [...ids].sort(), 'the six due sends, each once');
  t.equal(new Set([...a, ...b]).size, 6);
  t.same(await claimDueDeliveries(sql, 10, now, lease), [], 'nothing more is due while the claims last');
  // Claims that ran out (their worker died) are taken over, with the send due then.
  const takenOver = await claimDueDeliveries(sql, 10, new Date(lease.getTime() + 1), new Date(lease.getTime() + 10 * MIN));
  t.same(takenOver.sort(), [...ids, later].sort(), 'every send whose claim (or deferral) has ended');
  await releaseDeliveries(sql, [ids[0]!], now);
  const [row] = await sql<{ due_at: Date; claimed_at: Date | null }[]>`select due_at, claimed_at from delivery_queue where send_id = ${ids[0]!}`;
  t.same(row, { due_at: now, claimed_at: null }, 'given back: due now, held by nobody');
  await rescheduleDelivery(sql, ids[1]!, new Date(now.getTime() + 60 * MIN));
  t.same((await sql`select due_at from delivery_queue where send_id = ${ids[1]!}`)[0]!['due_at'], new Date(now.getTime() + 60 * MIN));
  await dequeueDeliveries(sql, ids);
  await dequeueDeliveries(sql, [later]);
  t.equal((await sql`select 1 from delivery_queue where send_id = any(${[...ids, later]}::uuid[])`).length, 0, 'out of the queue');
});

t.test('the queue-depth gauges count waiting and held sends as pg-boss counts jobs', async (t) => {
  const [waiting, held, deferred] = await Promise.all([newSend(), newSend(), newSend()]);
  const now = new Date();
  await enqueueDeliveries(sql, [
    { sendId: waiting, dueAt: now },
    { sendId: held, dueAt: new Date(now.getTime() + 5 * MIN), claimedAt: now },
    { sendId: deferred, dueAt: new Date(now.getTime() + 60 * MIN) },
  ]);
  const depth = (await readQueueDepths(sql)).find((d) => d.queue === 'outbound.deliver');
  t.same(depth, { queue: 'outbound.deliver', waiting: 2, active: 1 });
  await dequeueDeliveries(sql, [waiting, held, deferred]);
});

t.test('an upgrade moves the deliveries pg-boss still held into the queue, due when their jobs were', async (t) => {
  const name = `mp_test_upgrade_${randomBytes(6).toString('hex')}`;
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  // The application's own connection: pg-boss stores a job's data through it as the service does.
  const db = connect(url.toString(), createLogger('silent'), { max: 2 });
  t.teardown(async () => {
    await db.end();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });
  const all = loadMigrations();
  await migrate(
    db,
    all.filter((m) => m.version < 100),
  );
  const boss = await startBoss(db, createLogger('silent'), { supervise: false });
  await boss.createQueue('outbound.deliver');
  const tenant = await insertTenant(db);
  const sendOf = async (status: string) => {
    const id = randomUUID();
    await db`
      insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
      values (${id}, ${tenant}, 'api', 'live', ${status}, 'a@w.example', 'b@d.example', 's', ${`${id}@mx`}, 'b@mx', now(), now())`;
    return id;
  };
  const [queued, deferred, delivered] = [await sendOf('queued'), await sendOf('deferred'), await sendOf('delivered')];
  const retryAt = new Date(Date.now() + 3600_000);
  await boss.send('outbound.deliver', { send_id: queued });
  await boss.send('outbound.deliver', { send_id: deferred }, { startAfter: retryAt });
  await boss.send('outbound.deliver', { send_id: delivered });
  await boss.stop({ graceful: false, wait: true });
  await migrate(db, all);
  const rows = await db<{ send_id: string; due_at: Date }[]>`select send_id, due_at from delivery_queue order by due_at`;
  t.same(
    rows.map((r) => r.send_id),
    [queued, deferred],
    'the pending deliveries, not the delivered send',
  );
  t.equal(rows[1]!.due_at.getTime(), retryAt.getTime(), 'a retry is due when its job was');
  t.equal((await db`select 1 from pgboss.job where name = 'outbound.deliver' and state < 'completed'`).length, 0, 'nothing is left for pg-boss to run');
});
