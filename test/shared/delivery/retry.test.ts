// The retry curve: growing waits up to the cap, a last try at the age limit, then a soft bounce.
import t from 'tap';
import { formatHours, nextRetry, retryDelayMinutes, retryDetail } from '../../../shared/delivery/retry.js';

const curve = { first_retry_minutes: 5, factor: 2, max_interval_minutes: 720, max_age_hours: 72 };
const MIN = 60_000;
const HOUR = 60 * MIN;
const created = new Date('2026-03-01T10:00:00Z');
const after = (ms: number) => new Date(created.getTime() + ms);

t.test('each wait is factor times the one before, never more than the cap', async (t) => {
  t.same(
    [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => retryDelayMinutes(curve, n)),
    [5, 10, 20, 40, 80, 160, 320, 640, 720, 720],
  );
  t.equal(retryDelayMinutes(curve, 5000), 720, 'a huge attempt count stays at the cap');
  t.equal(retryDelayMinutes({ ...curve, factor: 1 }, 7), 5, 'factor 1 keeps the first wait');
  t.equal(retryDelayMinutes(curve, 0), 5, 'attempt numbers start at 1');
});

t.test('a temporary failure is retried on the curve from the time it happened', async (t) => {
  t.same(nextRetry(curve, { createdAt: created, now: created, attempt: 1 }), { kind: 'retry', at: after(5 * MIN) });
  t.same(nextRetry(curve, { createdAt: created, now: after(HOUR), attempt: 3 }), { kind: 'retry', at: after(HOUR + 20 * MIN) });
});

t.test('the last retry is at the age limit, and a failure there gives up', async (t) => {
  t.same(nextRetry(curve, { createdAt: created, now: after(70 * HOUR), attempt: 12 }), { kind: 'retry', at: after(72 * HOUR) });
  const gaveUp = nextRetry(curve, { createdAt: created, now: after(72 * HOUR), attempt: 13 });
  t.same(gaveUp, { kind: 'give_up', reason: 'gave up after 13 attempts over 72 h' });
  t.same(nextRetry(curve, { createdAt: created, now: after(80 * HOUR), attempt: 1 }), { kind: 'give_up', reason: 'gave up after 1 attempt over 80 h' });
});

t.test('another curve: factor 3 capped at an hour, a 6-hour age limit', async (t) => {
  const short = { first_retry_minutes: 2, factor: 3, max_interval_minutes: 60, max_age_hours: 6 };
  t.same(
    [1, 2, 3, 4, 5].map((n) => retryDelayMinutes(short, n)),
    [2, 6, 18, 54, 60],
  );
  t.same(nextRetry(short, { createdAt: created, now: after(5.5 * HOUR), attempt: 9 }), { kind: 'retry', at: after(6 * HOUR) });
  t.equal(nextRetry(short, { createdAt: created, now: after(6 * HOUR), attempt: 10 }).kind, 'give_up');
});

t.test('what the send says after a temporary failure', async (t) => {
  const retry = nextRetry(curve, { createdAt: created, now: created, attempt: 1 });
  t.equal(retryDetail(retry, 1, '451 4.7.1 Greylisted'), 'temporary failure (attempt 1): 451 4.7.1 Greylisted; next try at 2026-03-01T10:05:00.000Z');
  const gaveUp = nextRetry(curve, { createdAt: created, now: after(72 * HOUR), attempt: 9 });
  t.equal(retryDetail(gaveUp, 9, '452 4.2.2 Mailbox full'), 'gave up after 9 attempts over 72 h; last reply: 452 4.2.2 Mailbox full');
});

t.test('ages read as hours', async (t) => {
  t.equal(formatHours(72 * HOUR), '72 h');
  t.equal(formatHours(1.5 * HOUR), '1.5 h');
  t.equal(formatHours(72 * HOUR + 60_000), '72 h');
});
