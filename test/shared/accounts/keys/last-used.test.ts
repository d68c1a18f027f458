// KeyUsageRecorder: last_used_at is written in batches, at most once per key per interval, never per request.
import t from 'tap';
import type { Queryable } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { KeyUsageRecorder } from '../../../../shared/accounts/keys/last-used.js';

/** A stand-in for the database: records each statement's parameters, optionally failing. */
function fakeDb(options: { fail?: () => boolean } = {}) {
  const writes: { ids: string[]; ats: string[] }[] = [];
  const db = ((_strings: TemplateStringsArray, ...values: unknown[]) => {
    if (options.fail?.()) return Promise.reject(new Error('database unavailable'));
    writes.push({ ids: values[0] as string[], ats: values[1] as string[] });
    return Promise.resolve([]);
  }) as unknown as Queryable;
  return { db, writes };
}

const log = createLogger('silent');
const t0 = new Date('2030-01-01T00:00:00.000Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

t.test('many uses of one key within the interval make a single write', async (t) => {
  const { db, writes } = fakeDb();
  const recorder = new KeyUsageRecorder(db, log, 60);
  t.teardown(() => recorder.close());
  for (let i = 0; i < 1000; i++) recorder.record('key-a', later(i * 10), '127.0.0.1');
  await recorder.flush();
  t.equal(writes.length, 1, 'one statement');
  t.same(writes[0]!.ids, ['key-a']);
  t.equal(writes[0]!.ats[0], t0.toISOString(), 'records the first use of the interval');

  for (let i = 0; i < 100; i++) recorder.record('key-a', later(30_000 + i), '127.0.0.1');
  await recorder.flush();
  t.equal(writes.length, 1, 'still one write: uses within 60 s of the last write are not written');

  recorder.record('key-a', later(60_000), '127.0.0.1');
  await recorder.flush();
  t.equal(writes.length, 2, 'a use a full interval later is written');
  t.equal(writes[1]!.ats[0], later(60_000).toISOString());
});

t.test('uses of several keys share one batched statement', async (t) => {
  const { db, writes } = fakeDb();
  const recorder = new KeyUsageRecorder(db, log, 60);
  t.teardown(() => recorder.close());
  for (let round = 0; round < 10; round++) {
    for (const id of ['k1', 'k2', 'k3']) recorder.record(id, later(round), null);
  }
  await recorder.flush();
  t.equal(writes.length, 1);
  t.same([...writes[0]!.ids].sort(), ['k1', 'k2', 'k3']);
});

t.test('a batch is written on its own shortly after a use, without an explicit flush', async (t) => {
  const { db, writes } = fakeDb();
  const recorder = new KeyUsageRecorder(db, log, 60);
  t.teardown(() => recorder.close());
  recorder.record('key-a', t0, null);
  // The recorder schedules its own flush; wait for it with a bounded poll.
  for (let i = 0; i < 100 && writes.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(writes.length, 1);
});

t.test('a failed write is retried on the next use instead of being lost for the interval', async (t) => {
  let failing = true;
  const { db, writes } = fakeDb({ fail: () => failing });
  const recorder = new KeyUsageRecorder(db, log, 60);
  t.teardown(() => recorder.close());
  recorder.record('key-a', t0, null);
  await recorder.flush();
  t.equal(writes.length, 0, 'the write failed');
  failing = false;
  recorder.record('key-a', later(1000), null);
  await recorder.flush();
  t.equal(writes.length, 1, 'the next use is written although it is within the interval');
});

t.test('close writes what is pending', async (t) => {
  const { db, writes } = fakeDb();
  const recorder = new KeyUsageRecorder(db, log, 60);
  recorder.record('key-a', t0, null);
  await recorder.close();
  t.equal(writes.length, 1);
});
