// Slots with a bounded wait: at most N holders, a waiter is handed a freed slot in arrival order or refused after its wait; per-key slots are independent and forgotten when idle.
import t from 'tap';
import { KeyedSlots, Slots } from '../../../shared/db/query-slots.js';

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
