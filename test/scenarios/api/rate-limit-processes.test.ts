// Two real `mailpath start` processes on one database: a rate limit spent on one holds on the other.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import { createTestDatabase } from '../../helpers/db.js';
import { https, startMailpathProcess, type HttpsAnswer, type MailpathProcess } from '../../helpers/mailpath-process.js';

const READ_LIMIT = 10;
const SYNC_INTERVAL_MS = 200;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls the shared table until a bucket's current count reaches `n` (bounded). */
async function waitForStoredCount(sql: postgres.Sql, bucket: string, n: number): Promise<number> {
  let count = 0;
  for (let i = 0; i < 50 && count < n; i++) {
    await sleep(SYNC_INTERVAL_MS / 2);
    const [row] = await sql<{ count: number }[]>`
      select coalesce(max(count), 0)::int as count from rate_limit_counters
      where bucket = ${bucket} and window_start = date_trunc('minute', now())`;
    count = row!.count;
  }
  return count;
}

t.test('one limit holds across two processes', async (t) => {
  const db = await createTestDatabase();
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  const procs: MailpathProcess[] = [];
  t.teardown(async () => {
    // Children first, so they never see their database vanish.
    await Promise.all(procs.map((p) => p.stop()));
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  const env = {
    DATABASE_URL: db.url,
    MAILPATH_ROLES: 'api',
    // One JWT secret for both, as any multi-process deployment needs (each data dir would otherwise generate its own).
    MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
    MAILPATH_DB_POOL_SIZE: '4',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: String(READ_LIMIT),
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__SYNC_INTERVAL_MS: String(SYNC_INTERVAL_MS),
  };
  // Pushed as each comes up, so the teardown stops one that started even if the other fails to.
  await Promise.all([0, 1].map(async () => procs.push(await startMailpathProcess(env))));
  const [p1, p2] = procs as [MailpathProcess, MailpathProcess];

  const reg = await https(p1.httpsPort, 'POST', '/auth/register', {
    body: { tenant_name: 'Two Procs', tenant_slug: 'two-procs', email: 'owner@two-procs.test', password: 'Correct-horse-42' },
  });
  t.equal(reg.status, 201, 'registered on process 1');
  const created = await https(p1.httpsPort, 'POST', '/api-keys', { token: reg.body.data.token, body: { name: 'shared' } });
  t.equal(created.status, 201, 'key created on process 1');
  const key: string = created.body.data.key;
  const bucket = `key:${created.body.data.id}:read`;

  // The whole exchange below (~1-2 s) must fall in one minute window; start it with at least 10 s of the minute left.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await sleep(60_000 - intoMinute + 100);

  const spent = 6;
  for (let i = 1; i <= spent; i++) {
    const res = await https(p1.httpsPort, 'GET', '/whoami', { token: key });
    t.equal(res.status, 200, `process 1, request ${i}: 200`);
    if (i === spent) t.equal(res.headers['x-ratelimit-remaining'], String(READ_LIMIT - spent));
  }
  t.equal(await waitForStoredCount(sql, bucket, spent), spent, `process 1 synced its ${spent} requests to the database`);

  const onP2: number[] = [];
  let firstOnP2: HttpsAnswer | undefined;
  let refused: HttpsAnswer | undefined;
  for (let i = 0; i < READ_LIMIT; i++) {
    const res = await https(p2.httpsPort, 'GET', '/whoami', { token: key });
    firstOnP2 ??= res;
    onP2.push(res.status);
    if (res.status === 429) {
      refused = res;
      break;
    }
  }
  t.equal(firstOnP2!.headers['x-ratelimit-remaining'], String(READ_LIMIT - spent - 1), "process 2's first request already counts process 1's");
  t.same(onP2, [200, 200, 200, 200, 429], `process 2 admits only the remaining ${READ_LIMIT - spent}, then refuses`);
  t.equal(refused?.body.error, 'rate_limited');
  t.ok(Number(refused?.headers['retry-after']) >= 1, 'with Retry-After');

  // And back on process 1, once process 2's counts have been synced and pulled.
  t.equal(await waitForStoredCount(sql, bucket, READ_LIMIT), READ_LIMIT, 'the database holds the full limit');
  await sleep(3 * SYNC_INTERVAL_MS);
  const back = await https(p1.httpsPort, 'GET', '/whoami', { token: key });
  t.equal(back.status, 429, 'process 1 refuses too');
  // What the counts above assume, read from the limiter's own state rather than the clock: one window holds them all
  // (a sync that pulls the next minute's window before anyone spent from it leaves a row of 0 there).
  const windows = await sql<{ count: number }[]>`select count from rate_limit_counters where bucket = ${bucket} and count > 0`;
  t.same(
    windows.map((w) => w.count),
    [READ_LIMIT],
    "every request was counted in one window (a minute's edge would have split them, and the counts with it)",
  );
});
