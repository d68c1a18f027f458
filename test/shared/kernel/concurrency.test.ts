// Bounded concurrency helpers: forEachLimit keeps at most N in flight and visits every item; Gate admits at most N, in order.
import t from 'tap';
import { forEachLimit, Gate } from '../../../shared/kernel/concurrency.js';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('forEachLimit visits every item with at most limit in flight', async (t) => {
  let inFlight = 0;
  let peak = 0;
  const seen: number[] = [];
  await forEachLimit([...Array(25).keys()], 4, async (n) => {
    inFlight++;
    peak = Math.max(peak, inFlight);
    await tick(n % 3);
    seen.push(n);
    inFlight--;
  });
  t.equal(peak, 4);
  t.same(
    seen.sort((a, b) => a - b),
    [...Array(25).keys()],
  );
  await forEachLimit([], 4, async () => {
    t.fail('no items, no calls');
  });
  let calls = 0;
  await forEachLimit([1, 2], 10, async () => {
    calls++;
  });
  t.equal(calls, 2, 'fewer items than the limit');
});

t.test('forEachLimit rejects when a call rejects', async (t) => {
  await t.rejects(
    forEachLimit([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('boom');
    }),
    /boom/,
  );
});

t.test('Gate admits at most capacity at once, first come first served, and frees a slot on failure', async (t) => {
  const gate = new Gate(2);
  let inside = 0;
  let peak = 0;
  const order: number[] = [];
  const work = (n: number) =>
    gate.run(async () => {
      inside++;
      peak = Math.max(peak, inside);
      order.push(n);
      await tick(5);
      inside--;
      if (n === 1) throw new Error('fails');
      return n;
    });
  const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map(work));
  t.equal(peak, 2);
  t.same(order, [0, 1, 2, 3, 4, 5], 'admitted in arrival order');
  t.equal(results[1]!.status, 'rejected');
  t.same(
    results.filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<number>).value),
    [0, 2, 3, 4, 5],
  );
  t.equal(await gate.run(async () => 'free again'), 'free again', 'every slot was given back');
});
