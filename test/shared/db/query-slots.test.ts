// Slots with a bounded wait: at most N holders, a waiter is handed a freed slot in arrival order or refused after its wait; per-key slots are independent and
// forgotten when idle; time budgets per key drain at their rate.
import t from 'tap';
import { KeyedSlots, Slots, TimeBudget } from '../../../shared/db/query-slots.js';

t.test('at most capacity holders; a waiter gets the next freed slot, in arrival order', async (t) => {
  const slots = new Slots(2);
  t.ok(await slots.take(0));
  t.ok(await slots.take(0));
  t.notOk(await slots.take(0), 'full, and no wait asked: refused at once');
  const order: string[] = [];
  const first = slots.take(5_000).then((ok) => order.push(`first:${ok}`));
  const second = slots.take(5_000).then((ok) => order.push(`second:${ok}`));
  t.equal(slots.load, 4);
  slots.release();
  await first;
  t.same(order, ['first:true'], 'the freed slot went to the first waiter, the second still waits');
  slots.release();
  await second;
  t.same(order, ['first:true', 'second:true']);
  slots.release();
  slots.release();
  t.equal(slots.load, 0, 'every slot given back');
});

t.test('a waiter is refused once its wait is over, and leaves the queue', async (t) => {
  const slots = new Slots(1);
  t.ok(await slots.take(0));
  t.notOk(await slots.take(20), 'refused after 20 ms');
  t.equal(slots.load, 1, 'the refused waiter no longer counts');
  slots.release();
  t.ok(await slots.take(0), 'the slot freed with nobody waiting is free');
});

t.test('keys have their own slots and are forgotten when idle', async (t) => {
  const slots = new KeyedSlots(1);
  t.ok(await slots.take('a', 0));
  t.notOk(await slots.take('a', 0), "a's one slot is taken");
  t.ok(await slots.take('b', 0), 'b is not held back by a');
  slots.release('a');
  slots.release('b');
  t.equal((slots as unknown as { byKey: Map<string, unknown> }).byKey.size, 0, 'no entry kept for idle keys');
  t.ok(await slots.take('a', 0));
});

t.test('a time budget: a key over its budget waits until it has drained below, other keys spend meanwhile', async (t) => {
  let now = 0;
  const budget = new TimeBudget(10_000, 60_000, () => now);
  t.equal(budget.waitMs('a'), 0, 'nothing spent: no wait');
  let stop = budget.meter('a');
  now += 9_000;
  stop();
  stop();
  t.equal(budget.waitMs('a'), 0, '9 s of 10 spent (a stop counts once): may spend again');
  stop = budget.meter('a');
  now += 4_000;
  stop();
  // Level 13 s less the 4 s * 10/60 drained meanwhile: 12,333 ms, 2,333 over the budget, which drains in 14 s.
  const wait = budget.waitMs('a');
  t.ok(wait >= 14_000 && wait <= 14_002, `over budget: waits until it has drained below (${wait} ms)`);
  t.equal(budget.waitMs('b'), 0, 'another key is not held up');
  now += 14_000;
  t.not(budget.waitMs('a'), 0, 'still at the budget a millisecond before');
  now += 2;
  t.equal(budget.waitMs('a'), 0, 'drained below the budget');
  now += 60_000;
  t.equal(budget.waitMs('a'), 0, 'fully drained (and forgotten)');
});
