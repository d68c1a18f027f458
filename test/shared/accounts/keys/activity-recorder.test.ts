// KeyActivityRecorder against PostgreSQL: per-minute rows merged in memory and on upsert, close flushes, failures retained, pruning.
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { connect, type Queryable, type Sql } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { KeyActivityRecorder } from '../../../../shared/accounts/keys/activity-recorder.js';
import { pruneKeyActivity } from '../../../../shared/accounts/keys/activity-queries.js';
import { bucketIndex } from '../../../../shared/accounts/keys/activity-histogram.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';
import type { TestLike } from '../../../helpers/app.js';

const log = createLogger('silent');
const t0 = new Date('2030-05-10T12:00:05.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const minute0 = new Date('2030-05-10T12:00:00Z');
const minute1 = new Date('2030-05-10T12:01:00Z');

async function setup(t: TestLike): Promise<{ sql: Sql; keyA: string; keyB: string }> {
  const db = await createTestDatabase();
  const sql = connect(db.url, log, { max: 4 });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const tenant = await insertTenant(sql);
  const key = async (name: string) =>
    (
      await sql<{ id: string }[]>`
      insert into api_keys (tenant_id, name, prefix, mode, key_hash) values (${tenant}, ${name}, 'mp_live_x', 'live', ${randomBytes(16).toString('hex')})
      returning id`
    )[0]!.id;
  return { sql, keyA: await key('a'), keyB: await key('b') };
}

type Row = { key_id: string; minute: Date; route: string; status: number; count: number; latency_ms_sum: string; latency_buckets: number[] };
const rows = (sql: Sql) => sql<Row[]>`select * from api_key_activity order by key_id, minute, route, status`;

t.test('calls are counted per key, minute, route and status, with latency sums and buckets, and written once per flush', async (t) => {
  const { sql, keyA, keyB } = await setup(t);
  const recorder = new KeyActivityRecorder(sql, log, 60_000);
  t.teardown(() => recorder.close());
  const call = (keyId: string, ms: number, route: string, status: number, latencyMs: number, ip = '10.0.0.1') =>
    recorder.record({ keyId, at: at(ms), route, status, latencyMs, ip });
  call(keyA, 0, 'GET /whoami', 200, 3);
  call(keyA, 1000, 'GET /whoami', 200, 40);
  call(keyA, 2000, 'GET /whoami', 404, 7);
  call(keyA, 60_000, 'GET /whoami', 200, 3, '10.0.0.2');
  call(keyB, 0, 'POST /templates', 201, 120);
  t.equal(recorder.pendingSince(keyA, minute0), 4);
  t.equal(recorder.pendingSince(keyA, minute1), 1, 'by minute');
  t.equal((await rows(sql)).length, 0, 'nothing written before the flush');
  await recorder.flush();
  t.equal(recorder.pendingSince(keyA, minute0), 0);

  const written = await rows(sql);
  t.equal(written.length, 4);
  const first = written.find((r) => r.key_id === keyA && r.status === 200 && r.minute.getTime() === Date.parse('2030-05-10T12:00:00Z'))!;
  t.equal(first.count, 2);
  t.equal(Number(first.latency_ms_sum), 43);
  t.equal(first.latency_buckets[bucketIndex(3)], 1);
  t.equal(first.latency_buckets[bucketIndex(40)], 1);
  t.equal(
    first.latency_buckets.reduce((a, b) => a + b, 0),
    2,
  );

  // A second batch adds onto the same rows, bucket by bucket.
  call(keyA, 3000, 'GET /whoami', 200, 40);
  await recorder.close();
  const [merged] = await sql<Row[]>`select * from api_key_activity where key_id = ${keyA} and status = 200 and minute = ${new Date('2030-05-10T12:00:00Z')}`;
  t.equal(merged!.count, 3);
  t.equal(Number(merged!.latency_ms_sum), 83);
  t.equal(merged!.latency_buckets[bucketIndex(40)], 2);

  const clients = await sql<{ client_ip: string; count: number; day: Date }[]>`
    select client_ip, count, day from api_key_client_days where key_id = ${keyA} order by client_ip`;
  t.same(
    clients.map((c) => [c.client_ip, c.count]),
    [
      ['10.0.0.1', 4],
      ['10.0.0.2', 1],
    ],
  );
});

t.test('a flush waits for calls still being attributed; an attribution to no key records nothing', async (t) => {
  const { sql, keyA } = await setup(t);
  const recorder = new KeyActivityRecorder(sql, log, 60_000);
  t.teardown(() => recorder.close());
  let attribute!: (keyId: string | null) => void;
  const later = (keyId: string | null) => (keyId ? { keyId, at: at(0), route: 'GET /settings', status: 403, latencyMs: 2, ip: '10.0.0.1' } : null);
  const recorded = recorder.recordLater(new Promise<string | null>((r) => (attribute = r)).then(later));
  void recorder.recordLater(Promise.resolve(null));
  const flushed = recorder.flush();
  let flushDone = false;
  void flushed.then(() => (flushDone = true));
  await new Promise((r) => setTimeout(r, 50));
  t.notOk(flushDone, 'the flush waits for the look-up');
  attribute(keyA);
  await recorded;
  await flushed;
  const written = await rows(sql);
  t.equal(written.length, 1, 'the refused call is written by the flush begun before its key was known');
  t.equal(written[0]!.status, 403);
});

t.test('two recorders (two processes) flushing the same rows at once add up exactly', async (t) => {
  const { sql, keyA } = await setup(t);
  const recorders = [new KeyActivityRecorder(sql, log, 60_000), new KeyActivityRecorder(sql, log, 60_000)];
  for (let round = 0; round < 5; round++) {
    for (const r of recorders)
      for (let i = 0; i < 50; i++) r.record({ keyId: keyA, at: at(i * 100), route: `GET /r${i % 5}`, status: 200, latencyMs: 1, ip: '10.0.0.1' });
    await Promise.all(recorders.map((r) => r.flush()));
  }
  const [total] = await sql<{ n: number }[]>`select sum(count)::int as n from api_key_activity`;
  t.equal(total!.n, 500);
  const [clients] = await sql<{ n: number }[]>`select sum(count)::int as n from api_key_client_days`;
  t.equal(clients!.n, 500);
});

t.test('a failed write keeps the counts for the next flush; a deleted key is skipped', async (t) => {
  const { sql, keyA, keyB } = await setup(t);
  let fail = true;
  const flaky = ((strings: TemplateStringsArray, ...values: unknown[]) =>
    fail ? Promise.reject(new Error('database unavailable')) : sql(strings, ...(values as never[]))) as unknown as Queryable;
  const recorder = new KeyActivityRecorder(flaky, log, 60_000);
  t.teardown(() => recorder.close());
  recorder.record({ keyId: keyA, at: at(0), route: 'GET /whoami', status: 200, latencyMs: 2, ip: '10.0.0.1' });
  await recorder.flush();
  t.equal((await rows(sql)).length, 0);
  t.equal(recorder.pendingSince(keyA, minute0), 1, 'kept');
  fail = false;
  recorder.record({ keyId: keyA, at: at(10), route: 'GET /whoami', status: 200, latencyMs: 2, ip: '10.0.0.1' });
  recorder.record({ keyId: keyB, at: at(10), route: 'GET /whoami', status: 200, latencyMs: 2, ip: null });
  await sql`delete from api_keys where id = ${keyB}`;
  await recorder.flush();
  const written = await rows(sql);
  t.same(
    written.map((r) => [r.key_id, r.count]),
    [[keyA, 2]],
    'both calls of key A; the deleted key B dropped without failing the batch',
  );
});

t.test('pruning deletes minute rows and client days before the cut-off only', async (t) => {
  const { sql, keyA } = await setup(t);
  const recorder = new KeyActivityRecorder(sql, log, 60_000);
  const day = 86_400_000;
  for (const ago of [40, 32, 30, 0]) {
    recorder.record({ keyId: keyA, at: new Date(t0.getTime() - ago * day), route: 'GET /whoami', status: 200, latencyMs: 1, ip: `10.0.0.${ago}` });
  }
  await recorder.close();
  const deleted = await pruneKeyActivity(sql, new Date(t0.getTime() - 31 * day));
  t.same(deleted, { minutes: 2, clients: 2 });
  const left = await sql<{ client_ip: string }[]>`select client_ip from api_key_client_days order by client_ip`;
  t.same(
    left.map((r) => r.client_ip),
    ['10.0.0.0', '10.0.0.30'],
  );
  t.equal((await rows(sql)).length, 2);
});
