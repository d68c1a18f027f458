// Group commit: concurrent writes share commits, each answered with its own result; a failing item fails alone.
import t from 'tap';
import { GroupCommit } from '../../../shared/db/group-commit.js';
import { createLogger } from '../../../shared/kernel/log.js';

const log = createLogger('silent');

t.test('writes ready at the same time share one commit, and each gets its own result in order', async (t) => {
  const commits: number[][] = [];
  const group = new GroupCommit<number, string>(
    async (items) => {
      commits.push(items);
      await new Promise((r) => setTimeout(r, 5));
      return items.map((i) => `stored ${i}`);
    },
    log,
    'numbers',
  );
  const results = await Promise.all(Array.from({ length: 30 }, (_, i) => group.write(i)));
  t.same(
    results,
    Array.from({ length: 30 }, (_, i) => `stored ${i}`),
  );
  t.equal(commits.length, 1, 'one commit for 30 concurrent writes');
  // Writes that arrive while a commit runs wait for the next one, which takes them all.
  const first = group.write(100);
  await new Promise((r) => setImmediate(r));
  const later = Array.from({ length: 10 }, (_, i) => group.write(200 + i));
  await Promise.all([first, ...later]);
  t.same(
    commits.slice(1).map((c) => c.length),
    [1, 10],
  );
  t.equal(await group.write(7), 'stored 7', 'a lone write still commits');
});

t.test('a batch that fails is committed item by item: only the bad item fails', async (t) => {
  let calls = 0;
  const retried: boolean[] = [];
  const group = new GroupCommit<number, number>(
    async (items, retry) => {
      calls++;
      retried.push(retry);
      if (items.includes(13)) throw new Error('13 is refused');
      return items.map((i) => i * 2);
    },
    log,
    'numbers',
    5,
  );
  const settled = await Promise.allSettled([1, 2, 13, 4, 5, 6, 7].map((i) => group.write(i)));
  t.same(
    settled.map((s) => (s.status === 'fulfilled' ? s.value : 'refused')),
    [2, 4, 'refused', 8, 10, 12, 14],
  );
  t.match((settled[2] as PromiseRejectedResult).reason, { message: '13 is refused' });
  // Batch of 5 fails, 5 single commits; then the remaining 2 in one batch.
  t.equal(calls, 1 + 5 + 1);
  t.same(retried, [false, true, true, true, true, true, false], 'items committed alone after a failed batch are marked as retries');
});

t.test('with concurrency 2, a second batch commits while the first is in flight; never more than 2 at once', async (t) => {
  let inFlight = 0;
  let most = 0;
  const group = new GroupCommit<number, number>(
    async (items) => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 20));
      inFlight--;
      return items;
    },
    log,
    'numbers',
    5,
    2,
  );
  const results = await Promise.all(Array.from({ length: 30 }, (_, i) => group.write(i)));
  t.same(
    results,
    Array.from({ length: 30 }, (_, i) => i),
  );
  t.equal(most, 2);
});
