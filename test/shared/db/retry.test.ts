// retryConflicts: a transaction PostgreSQL rolled back to break a deadlock (or a serialization conflict) runs again, a bounded number of times; other
// failures are thrown at once.
import t from 'tap';
import { isRetryableConflict, retryConflicts } from '../../../shared/db/retry.js';

const conflict = (code: string) => Object.assign(new Error(`conflict ${code}`), { code });

t.test('deadlocks and serialization failures are run again until the run succeeds', async (t) => {
  const failures = [conflict('40P01'), conflict('40001')];
  const retried: number[] = [];
  let calls = 0;
  const result = await retryConflicts(
    async () => {
      calls++;
      const next = failures.shift();
      if (next) throw next;
      return 'committed';
    },
    (_err, attempt) => retried.push(attempt),
  );
  t.equal(result, 'committed');
  t.equal(calls, 3);
  t.same(retried, [1, 2]);
});

t.test('another failure is thrown at once; a conflict that keeps coming is thrown after the last try', async (t) => {
  let calls = 0;
  await t.rejects(
    retryConflicts(
      async () => {
        calls++;
        throw conflict('23505');
      },
      () => {},
    ),
    { code: '23505' },
  );
  t.equal(calls, 1, 'a unique violation is not retried');
  calls = 0;
  await t.rejects(
    retryConflicts(
      async () => {
        calls++;
        throw conflict('40P01');
      },
      () => {},
      3,
    ),
    { code: '40P01' },
  );
  t.equal(calls, 3, 'bounded');
  t.notOk(isRetryableConflict(new Error('plain')));
  t.notOk(isRetryableConflict(undefined));
});
