// RateLimiter against a real database: exact limits in one process, the sliding window and its bound, syncing, and a limit shared by two instances.
import t from 'tap';
import { connect, type Sql } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { RateLimiter, type Bucket } from '../../../../shared/limits/rate-limits/limiter.js';
import type { TestLike } from '../../../helpers/app.js';
import { createTestDatabase } from '../../../helpers/db.js';

const log = createLogger('silent');

/** A start time 30.5 s into a minute (so minute windows have room both ways). */
const T0 = Date.UTC(2031, 4, 6, 12, 0, 30, 500);

/** A hand-moved time source for `now`. */
function manualNow(start = T0) {
  let current = start;
  return {
    now: () => current,
    advance(ms: number) {
      current += ms;
    },
    set(at: number) {
      current = at;
    },
  };
}

interface Ctx {
  sql: Sql;
  limiter(now?: () => number, syncIntervalMs?: number): RateLimiter;
}

/** A fresh database for the test, and RateLimiters on it that are closed at teardown (timers never started). */
async function setup(t: TestLike): Promise<Ctx> {
  const db = await createTestDatabase();
  const sql = connect(db.url, log, { max: 4 });
  const made: RateLimiter[] = [];
  t.teardown(async () => {
    for (const l of made) await l.close();
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  return {
    sql,
    limiter(now = Date.now, syncIntervalMs = 200) {
      const l = new RateLimiter(sql, log, syncIntervalMs, now);
      made.push(l);
      return l;
    },
  };
}

const bucket = (id: string, limit: number, windowSeconds = 60): Bucket => ({ id, limit, windowSeconds });

/** Hits `n` times and returns how many were allowed. */
async function hitMany(limiter: RateLimiter, buckets: Bucket[], n: number): Promise<number> {
  let allowed = 0;
  for (let i = 0; i < n; i++) if ((await limiter.hit(buckets)).allowed) allowed++;
  return allowed;
}

async function storedCount(sql: Sql, id: string, windowStart: number): Promise<number | undefined> {
  const [row] = await sql<{ count: number }[]>`
    select count from rate_limit_counters where bucket = ${id} and window_start = ${new Date(windowStart)}`;
  return row?.count;
}

const minuteStart = (at: number) => Math.floor(at / 60_000) * 60_000;

t.test('a limit of N admits exactly N in one process; denials are not counted', async (t) => {
  const { limiter } = await setup(t);
  const clock = manualNow();
  const l = limiter(clock.now);
  const b = bucket('key:a:read', 5);

  for (let i = 1; i <= 5; i++) {
    const d = await l.hit([b]);
    t.equal(d.allowed, true, `request ${i} allowed`);
    t.equal(d.reported.count, i);
    t.equal(d.reported.remaining, 5 - i, `remaining after ${i}`);
    t.equal(d.reported.bucket.id, 'key:a:read');
  }
  for (let i = 0; i < 3; i++) {
    const d = await l.hit([b]);
    t.equal(d.allowed, false, 'over the limit: denied');
    t.equal(d.reported.count, 5, 'denied requests are not counted');
    t.equal(d.reported.remaining, 0);
  }
  const peek = await l.peek(b);
  t.equal(peek.count, 5, 'peek sees the 5 admitted requests only');
});

t.test('reset is the seconds until one more request is free: with none left, until the next is admitted', async (t) => {
  const { limiter } = await setup(t);
  const minute = minuteStart(T0);
  const clock = manualNow(minute + 30_500);
  const l = limiter(clock.now);
  const b = bucket('key:r:read', 3);

  // Only this window counted: its requests start sliding out at its end.
  t.equal((await l.hit([b])).reported.resetSeconds, 30, '1 of 3: one more is free just after the minute ends (29.5 s)');
  await l.hit([b]);
  const last = await l.hit([b]);
  t.equal(last.reported.remaining, 0);
  t.equal(last.reported.resetSeconds, 30, '3 of 3: the next is admitted just after the minute ends');
  const denied = await l.hit([b]);
  t.equal(denied.allowed, false);
  t.equal(denied.reported.resetSeconds, 30, 'the refusal reports the same wait (Retry-After)');

  clock.set(minute + 60_000);
  const edge = await l.hit([b]);
  t.equal(edge.allowed, false, 'at the very edge the previous minute still counts in full');
  t.equal(edge.reported.resetSeconds, 1, 'at least 1 s');
  clock.set(minute + 60_001);
  const after = await l.hit([b]);
  t.equal(after.allowed, true, '1 ms later its share has begun to slide out: admitted');
  t.equal(after.reported.remaining, 0);
  t.equal(after.reported.resetSeconds, 20, 'the next one once another third of the previous 3 has slid out (20 s)');
  clock.set(minute + 80_000);
  t.equal((await l.hit([b])).allowed, false, 'not at 20 s');
  clock.set(minute + 80_001);
  t.equal((await l.hit([b])).allowed, true, 'just after');

  const sec = manualNow(Date.UTC(2031, 4, 6, 12, 0, 0, 250));
  const l2 = limiter(sec.now);
  const perSec = bucket('tenant:x:sec', 2, 1);
  await l2.hit([perSec]);
  t.equal((await l2.hit([perSec])).reported.resetSeconds, 1, 'per-second window');
  const day = await l2.hit([bucket('tenant:x:day', 2, 86_400)]);
  t.equal(day.reported.resetSeconds, 12 * 3600, 'per-day window: just after 00:00 UTC (11 h 59 min 59.751 s, rounded up)');
});

t.test('the previous window weighs in by the share the sliding window still covers', async (t) => {
  const { limiter } = await setup(t);
  const minute = minuteStart(T0);
  const clock = manualNow(minute + 30_500);
  const l = limiter(clock.now);
  const b = bucket('key:w:read', 5);

  t.equal(await hitMany(l, [b], 7), 5, '5 of 7 in the first minute');
  clock.set(minute + 60_500);
  const edge = await l.hit([b]);
  t.equal(edge.allowed, true, 'just past the edge: the previous 5 count 4.96, one is free');
  t.equal(edge.reported.count, 5, 'sliding count 5.96, rounded down');
  t.equal(edge.reported.remaining, 0);
  t.equal(edge.reported.resetSeconds, 12, 'the next one when 1 of the previous 5 has slid out (12 s in)');
  t.equal((await l.hit([b])).allowed, false, 'no reset at the edge: the rest of the burst is refused');

  // From here a client asking every 0.5 s gets one request every 12 s (60 s / 5): the limit's pace, never a burst.
  const admittedAt: number[] = [];
  for (let at = minute + 61_000; at < minute + 180_000; at += 500) {
    clock.set(at);
    if ((await l.hit([b])).allowed) admittedAt.push(at - minute);
  }
  t.same(admittedAt, [72_500, 84_500, 96_500, 108_500, 120_500, 132_500, 144_500, 156_500, 168_500], 'one every 12 s: 5 per minute');

  const sec = bucket('tenant:w:sec', 2, 1);
  clock.set(Date.UTC(2031, 4, 6, 12, 0, 5, 0));
  t.equal(await hitMany(l, [sec], 3), 2, 'per-second bucket: 2 of 3');
  clock.advance(500);
  t.equal(await hitMany(l, [sec], 3), 0, 'later in the same second: none');
  clock.advance(500);
  t.equal(await hitMany(l, [sec], 3), 0, 'at the next second: the previous 2 still count in full');
  clock.advance(500);
  t.equal(await hitMany(l, [sec], 3), 1, 'half-way through it: one is free again');
});

t.test('a burst across a window edge admits the limit, not twice the limit', async (t) => {
  const { limiter } = await setup(t);
  const minute = minuteStart(T0) + 60_000;
  const clock = manualNow();
  const l = limiter(clock.now);
  const b = bucket('key:burst-edge:read', 60);

  // 120 requests in 1.43 s, from 0.7 s before a minute's end to 0.73 s after it (the probe's fixed-window hole).
  const admitted: number[] = [];
  for (let i = 0; i < 120; i++) {
    clock.set(minute - 700 + i * 12);
    if ((await l.hit([b])).allowed) admitted.push(clock.now());
  }
  // The documented bound: limit + ⌈limit × e / window⌉, e the part of the span after the edge: 60 + ⌈0.728⌉ = 61.
  t.equal(admitted.length, 61, '61 of the 120 admitted (a fixed window admitted all 120)');
  t.ok(admitted[admitted.length - 1]! - admitted[0]! < 60_000, 'all within one 60 s span');
});

t.test('any span of a long irregular run stays within the documented bound', async (t) => {
  const { limiter } = await setup(t);
  const clock = manualNow(minuteStart(T0));
  const l = limiter(clock.now);
  const limit = 30;
  const b = bucket('key:trace:read', limit);
  const W = 60_000;

  // Five minutes of bursts and lulls from a fixed pseudo-random sequence (deterministic).
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const admitted: number[] = [];
  const end = clock.now() + 5 * W;
  for (let i = 0; i < 20_000 && clock.now() < end; i++) {
    if ((await l.hit([b])).allowed) admitted.push(clock.now());
    clock.advance(rand() < 0.1 ? 2_000 + Math.floor(rand() * 8_000) : Math.floor(rand() * 200));
  }
  t.ok(admitted.length >= 4 * limit && admitted.length <= 6 * limit, `the long-run rate is the limit's (${admitted.length} in 5 min)`);

  // For every pair of admitted requests less than a window apart: the count between them is at most the limit,
  // plus ⌈limit × e / window⌉ when the span crosses a window edge, e being how far past the edge it ends.
  let worst = 0;
  for (let i = 0; i < admitted.length; i++) {
    const edge = Math.floor(admitted[i]! / W) * W + W;
    for (let k = i; k < admitted.length && admitted[k]! - admitted[i]! < W; k++) {
      const past = Math.max(0, admitted[k]! - edge);
      const bound = limit + Math.ceil((limit * past) / W);
      const count = k - i + 1;
      worst = Math.max(worst, count - limit);
      if (count > bound) {
        t.fail(`${count} admitted between ${admitted[i]} and ${admitted[k]} (bound ${bound})`);
        return;
      }
    }
  }
  t.pass(`every span within the bound (at most ${worst} over the limit)`);
});

t.test('buckets are independent', async (t) => {
  const { limiter } = await setup(t);
  const l = limiter(manualNow().now);
  const a = bucket('key:a:read', 3);
  const b = bucket('key:b:read', 3);
  const aWrite = bucket('key:a:write', 2);

  t.equal(await hitMany(l, [a], 5), 3, 'a admits 3 of 5');
  t.equal(await hitMany(l, [b], 5), 3, 'b still admits its own 3');
  t.equal(await hitMany(l, [aWrite], 5), 2, "a's write bucket is separate from its read bucket");
  t.equal((await l.peek(a)).count, 3);
  t.equal((await l.peek(b)).count, 3);
});

t.test('a request against several buckets is denied if any is full, and then counts in none', async (t) => {
  const { limiter } = await setup(t);
  const l = limiter(manualNow().now);
  const keyA = bucket('key:a:read', 10);
  const keyB = bucket('key:b:read', 10);
  const tenant = bucket('tenant:t:sec', 4, 1);

  t.equal(await hitMany(l, [keyA, tenant], 3), 3);
  t.equal(await hitMany(l, [keyB, tenant], 1), 1, 'the tenant bucket is now full (4)');

  const denied = await l.hit([keyA, tenant]);
  t.equal(denied.allowed, false, 'denied: the tenant bucket is full though the key bucket is not');
  t.equal(denied.reported.bucket.id, 'tenant:t:sec', 'the denying bucket is reported');
  t.equal(denied.reported.remaining, 0);
  t.equal((await l.peek(keyA)).count, 3, 'the key bucket did not count the denied request');
  t.equal((await l.peek(tenant)).count, 4, 'nor did the tenant bucket');

  const allowed = await l.hit([keyB]);
  t.equal(allowed.allowed, true, 'the key bucket alone still admits');
  t.equal(allowed.reported.bucket.id, 'key:b:read', 'an admitted request reports the first bucket');
  t.equal(allowed.reported.count, 2);

  // Fill keyA to its limit: then the request is denied by keyA, the tenant bucket (new second) untouched.
  const clock = manualNow(T0 + 1000);
  const l2 = limiter(clock.now);
  const small = bucket('key:s:read', 1);
  const tenant2 = bucket('tenant:u:sec', 100, 1);
  t.equal((await l2.hit([small, tenant2])).allowed, true);
  const d = await l2.hit([small, tenant2]);
  t.equal(d.allowed, false);
  t.equal(d.reported.bucket.id, 'key:s:read');
  t.equal((await l2.peek(tenant2)).count, 1, 'the tenant bucket counted only the admitted request');
});

t.test('sync pushes local counts to rate_limit_counters, once each', async (t) => {
  const { sql, limiter } = await setup(t);
  const clock = manualNow();
  const l = limiter(clock.now);
  const a = bucket('key:a:read', 100);
  const tenant = bucket('tenant:t:sec', 100, 1);
  const start = minuteStart(T0);

  t.equal(await hitMany(l, [a, tenant], 7), 7);
  t.equal(await storedCount(sql, 'key:a:read', start), undefined, 'before a sync nothing is written (the first read only reads)');

  await l.sync();
  t.equal(await storedCount(sql, 'key:a:read', start), 7, 'the 7 requests are in the table after a sync');
  t.equal(await storedCount(sql, 'tenant:t:sec', Math.floor(T0 / 1000) * 1000), 7, 'per-second bucket too');
  const [row] = await sql<{ window_seconds: number }[]>`select window_seconds from rate_limit_counters where bucket = 'key:a:read'`;
  t.equal(row!.window_seconds, 60);

  await l.sync();
  t.equal(await storedCount(sql, 'key:a:read', start), 7, 'a second sync adds nothing already sent');

  t.equal(await hitMany(l, [a], 3), 3);
  await l.sync();
  t.equal(await storedCount(sql, 'key:a:read', start), 10, 'only the new delta is added');
  t.equal((await l.peek(a)).count, 10, 'the local view agrees with the table');

  await l.hit([a]);
  await l.close();
  t.equal(await storedCount(sql, 'key:a:read', start), 11, 'close() flushes what is pending');
});

t.test('the periodic timer syncs on its own', async (t) => {
  const { sql, limiter } = await setup(t);
  const l = limiter(manualNow().now, 20);
  l.start();
  t.equal(await hitMany(l, [bucket('key:timer:read', 10)], 4), 4);
  let stored: number | undefined;
  for (let i = 0; i < 100 && stored !== 4; i++) {
    await new Promise((r) => setTimeout(r, 20));
    stored = await storedCount(sql, 'key:timer:read', minuteStart(T0));
  }
  t.equal(stored, 4, 'the counts reach the table without an explicit sync');
});

t.test('two instances on one database share a limit', async (t) => {
  const { sql, limiter } = await setup(t);
  const clock = manualNow();
  const a = limiter(clock.now);
  const b = limiter(clock.now);
  const key = bucket('key:shared:read', 60);

  t.equal(await hitMany(a, [key], 40), 40, 'instance A admits 40');
  await a.sync();
  t.equal(await storedCount(sql, 'key:shared:read', minuteStart(T0)), 40);

  const first = await b.hit([key]);
  t.equal(first.allowed, true);
  t.equal(first.reported.count, 41, "B's first request of the window reads A's 40 through");
  t.equal(first.reported.remaining, 19);
  t.equal(await hitMany(b, [key], 30), 19, 'B admits only the remaining 19 more (20 in all)');
  t.equal((await b.hit([key])).allowed, false, 'B is at the shared limit');

  t.equal((await a.peek(key)).count, 40, 'A has not heard of B yet');
  await b.sync();
  await a.sync();
  const afterSync = await a.hit([key]);
  t.equal(afterSync.allowed, false, "after syncing, A sees B's 20 and refuses");
  t.equal(afterSync.reported.count, 60);
  t.equal(await storedCount(sql, 'key:shared:read', minuteStart(T0)), 60, 'the table holds exactly the limit');
});

t.test('concurrent first requests of a window in one process do not overshoot', async (t) => {
  const { sql, limiter } = await setup(t);
  const clock = manualNow();
  const a = limiter(clock.now);
  const key = bucket('key:burst:read', 25);
  t.equal(await hitMany(a, [key], 10), 10);
  await a.sync();

  const b = limiter(clock.now);
  const decisions = await Promise.all(Array.from({ length: 40 }, () => b.hit([key])));
  t.equal(decisions.filter((d) => d.allowed).length, 15, '40 concurrent requests in a new process: 15 admitted');
  await b.sync();
  t.equal(await storedCount(sql, 'key:burst:read', minuteStart(T0)), 25);
});

t.test('expired counters are deleted by a sync', async (t) => {
  const { sql, limiter } = await setup(t);
  const clock = manualNow();
  const l = limiter(clock.now);
  const day = 86_400_000;
  await sql`
    insert into rate_limit_counters (bucket, window_start, window_seconds, count) values
      ('key:old:read', ${new Date(minuteStart(T0) - 3 * day)}, 60, 9),
      ('tenant:old:day', ${new Date(Math.floor(T0 / day) * day - 3 * day)}, 86400, 9),
      ('tenant:yesterday:day', ${new Date(Math.floor(T0 / day) * day - day)}, 86400, 9)`;

  await l.hit([bucket('key:now:read', 10)]);
  await l.sync();
  const left = (await sql<{ bucket: string }[]>`select bucket from rate_limit_counters order by bucket`).map((r) => r.bucket);
  t.same(left, ['key:now:read', 'tenant:yesterday:day'], 'windows older than the retention are gone; recent ones stay');

  clock.advance(3 * day);
  await l.sync();
  const after = (await sql<{ bucket: string }[]>`select bucket from rate_limit_counters order by bucket`).map((r) => r.bucket);
  t.same(after, [], "three days later this limiter's own windows are deleted too");
  t.equal((await l.peek(bucket('key:now:read', 10))).count, 0, 'and a fresh window starts empty');
});
