// Rate limits through the API: X-RateLimit-* headers, 429 rate_limited, per-key / per-user / per-category buckets, the tenant layer.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import type { Env } from '../../../shared/config/index.js';
import { insertUser } from '../../../shared/accounts/auth/users.js';
import { issueSession } from '../../../shared/accounts/auth/accounts.js';
import { RateLimiter } from '../../../shared/limits/rate-limits/limiter.js';
import { buildTestApp, call, createKey, registerTenant, type ApiResponse, type TestApp, type TestLike } from '../../helpers/app.js';

const L = 'MAILPATH_CONFIG__LIMITS__RATE_LIMITS__';

/**
 * An app whose rate limiter reads a hand-moved clock, so that counting to a limit never straddles a window
 * boundary. The clock starts 30.5 s into a minute (ahead of real time, so fresh sessions are valid).
 * ApiContext builds its RateLimiter on Date.now, so the test swaps in one on the app's clock.
 */
async function frozenApp(t: TestLike, env: Env): Promise<TestApp & { clock: ManualClock }> {
  const clock = new ManualClock(new Date(Math.ceil(Date.now() / 60_000) * 60_000 + 30_500));
  const app = await buildTestApp(t, { env, clock });
  // Never started, so no timer: one process, nothing to sync.
  app.ctx.rateLimiter = new RateLimiter(app.sql, app.ctx.log, app.config.limits.rate_limits.sync_interval_ms, () => clock.now().getTime());
  return { ...app, clock };
}

function limitHeaders(res: ApiResponse) {
  return {
    limit: Number(res.headers['x-ratelimit-limit']),
    remaining: Number(res.headers['x-ratelimit-remaining']),
    reset: Number(res.headers['x-ratelimit-reset']),
  };
}

/** Sends `n` GET requests and returns their statuses. */
async function getMany(test: TestApp, url: string, token: string | undefined, n: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await call(test.app, 'GET', url, token ? { token } : {})).status);
  return statuses;
}

const repeat = (status: number, n: number) => Array.from({ length: n }, () => status);

t.test('X-RateLimit-* headers on every response', async (t) => {
  const test = await buildTestApp(t, { env: { [`${L}PER_MINUTE__READ`]: '50', [`${L}PER_MINUTE__WRITE`]: '40', [`${L}PER_MINUTE__PUBLIC`]: '1000' } });
  const { app } = test;
  const owner = await registerTenant(app);
  const { key } = await createKey(app, owner);

  const checks: [string, ApiResponse, number, number][] = [
    ['200 with an API key', await call(app, 'GET', '/whoami', { token: key }), 200, 50],
    ['200 with a JWT', await call(app, 'GET', '/whoami', { token: owner.token }), 200, 50],
    ['401 without a credential', await call(app, 'GET', '/whoami'), 401, 1000],
    ['401 with a bad credential', await call(app, 'GET', '/whoami', { token: 'mp_live_nonsense' }), 401, 1000],
    ['404 for an unknown route', await call(app, 'GET', '/no-such-route'), 404, 1000],
    ['422 for a wrong field', await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: '' } }), 422, 40],
    ['400 for an unexpected field', await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'x', colour: 'red' } }), 400, 40],
    ['403 for an API key on a user-only route', await call(app, 'GET', '/api-keys', { token: key }), 403, 50],
  ];
  for (const [what, res, status, limit] of checks) {
    t.equal(res.status, status, `${what}: status`);
    const h = limitHeaders(res);
    t.equal(h.limit, limit, `${what}: X-RateLimit-Limit`);
    t.ok(Number.isInteger(h.remaining) && h.remaining >= 0 && h.remaining < limit, `${what}: X-RateLimit-Remaining ${h.remaining}`);
    t.ok(Number.isInteger(h.reset) && h.reset >= 1 && h.reset <= 120, `${what}: X-RateLimit-Reset ${h.reset}`);
    t.notOk(res.headers['retry-after'], `${what}: no Retry-After`);
  }
});

t.test('429 rate_limited with Retry-After once the read bucket is used up', async (t) => {
  const test = await frozenApp(t, { [`${L}PER_MINUTE__READ`]: '5' });
  const owner = await registerTenant(test.app);
  const { key } = await createKey(test.app, owner);

  for (let i = 1; i <= 5; i++) {
    const res = await call(test.app, 'GET', '/whoami', { token: key });
    t.equal(res.status, 200, `request ${i} allowed`);
    t.same(limitHeaders(res), { limit: 5, remaining: 5 - i, reset: 30 }, `headers after request ${i}`);
  }
  const limited = await call(test.app, 'GET', '/whoami', { token: key });
  t.equal(limited.status, 429);
  t.same(limited.body, { ok: false, error: 'rate_limited', message: limited.body.message });
  t.match(limited.body.message, /5 requests per minute/);
  t.equal(limited.headers['retry-after'], '30', 'Retry-After: seconds to the end of the minute');
  t.same(limitHeaders(limited), { limit: 5, remaining: 0, reset: 30 });

  test.clock.advance(29_000);
  const later = await call(test.app, 'GET', '/whoami', { token: key });
  t.equal(later.status, 429, 'still limited later in the same minute');
  t.equal(later.headers['retry-after'], '1');

  test.clock.advance(1_000);
  const next = await call(test.app, 'GET', '/whoami', { token: key });
  t.equal(next.status, 200, 'past the minute the previous 5 begin to slide out (4.96 at 0.5 s): one is free');
  t.same(limitHeaders(next), { limit: 5, remaining: 0, reset: 12 }, 'the next one when a fifth of them has slid out, 12 s into the minute');
  const again = await call(test.app, 'GET', '/whoami', { token: key });
  t.equal(again.status, 429, 'no fresh allowance at the minute edge (a sliding window)');
  t.equal(again.headers['retry-after'], '12');
  test.clock.advance(11_600);
  t.equal((await call(test.app, 'GET', '/whoami', { token: key })).status, 200, 'admitted after Retry-After');
});

t.test('buckets are per API key: two keys of one tenant do not share', async (t) => {
  const test = await frozenApp(t, { [`${L}PER_MINUTE__READ`]: '5' });
  const owner = await registerTenant(test.app);
  const a = await createKey(test.app, owner, { name: 'a' });
  const b = await createKey(test.app, owner, { name: 'b' });

  t.same(await getMany(test, '/whoami', a.key, 7), [...repeat(200, 5), 429, 429], 'key a: 5 then 429');
  const first = await call(test.app, 'GET', '/whoami', { token: b.key });
  t.equal(first.status, 200, 'key b is unaffected');
  t.equal(limitHeaders(first).remaining, 4, 'key b has its own bucket');
  t.same(await getMany(test, '/whoami', b.key, 5), [...repeat(200, 4), 429]);

  const jwt = await call(test.app, 'GET', '/whoami', { token: owner.token });
  t.equal(jwt.status, 200, "the owner's session has a bucket of its own too");
  t.equal(limitHeaders(jwt).remaining, 4);
});

t.test('buckets are per user for a JWT', async (t) => {
  const test = await frozenApp(t, { [`${L}PER_MINUTE__READ`]: '4' });
  const owner = await registerTenant(test.app);
  const user = await insertUser(test.sql, { tenantId: owner.tenantId, email: 'dev@example.test', passwordHash: 'x', role: 'developer' });
  const devSession = await issueSession(test.ctx, user.id, owner.tenantId);
  test.clock.advance(1000);
  const ownerSecond = await issueSession(test.ctx, owner.userId, owner.tenantId);
  t.not(ownerSecond.token, owner.token, 'a second session token of the owner');

  t.same(await getMany(test, '/whoami', owner.token, 2), [200, 200]);
  t.same(await getMany(test, '/whoami', ownerSecond.token, 3), [200, 200, 429], "the owner's two sessions share one bucket");
  t.same(await getMany(test, '/whoami', devSession.token, 5), [...repeat(200, 4), 429], 'another user of the tenant has a bucket of their own');

  const other = await registerTenant(test.app);
  t.equal((await call(test.app, 'GET', '/whoami', { token: other.token })).status, 200, "another tenant's user is unaffected");
});

t.test('write and read buckets are separate', async (t) => {
  const test = await frozenApp(t, { [`${L}PER_MINUTE__READ`]: '3', [`${L}PER_MINUTE__WRITE`]: '3' });
  const owner = await registerTenant(test.app);

  t.same(await getMany(test, '/whoami', owner.token, 4), [200, 200, 200, 429], 'reads: 3 then 429');

  const writes: number[] = [];
  for (let i = 0; i < 4; i++) writes.push((await call(test.app, 'POST', '/api-keys', { token: owner.token, body: { name: `k${i}` } })).status);
  t.same(writes, [201, 201, 201, 429], 'writes have their own 3, then 429');
  const limited = await call(test.app, 'POST', '/api-keys', { token: owner.token, body: { name: 'k' } });
  t.equal(limitHeaders(limited).limit, 3);
  t.equal(limited.body.error, 'rate_limited');

  const [row] = await test.sql<{ count: number }[]>`select count(*)::int as count from api_keys where tenant_id = ${owner.tenantId}`;
  t.equal(row!.count, 3, 'refused writes did nothing');
  // A DELETE is a write too.
  const del = await call(test.app, 'DELETE', '/api-keys/00000000-0000-0000-0000-000000000000', { token: owner.token });
  t.equal(del.status, 429, 'DELETE counts against the write bucket');
});

t.test('per-tenant per-second layer: config default, then an override row', async (t) => {
  const test = await frozenApp(t, {
    [`${L}PER_MINUTE__READ`]: '100',
    [`${L}TENANT_DEFAULT_PER_SEC`]: '4',
    [`${L}OVERRIDE_CACHE_MS`]: '0',
  });
  const owner = await registerTenant(test.app);
  const a = await createKey(test.app, owner, { name: 'a' });
  const b = await createKey(test.app, owner, { name: 'b' });
  test.clock.advance(2000); // a fresh second after an empty one: registration and key creation counted before

  t.same(await getMany(test, '/whoami', a.key, 2), [200, 200]);
  t.same(await getMany(test, '/whoami', b.key, 2), [200, 200]);
  const limited = await call(test.app, 'GET', '/whoami', { token: a.key });
  t.equal(limited.status, 429, 'the tenant default of 4 per second is shared by every key of the tenant');
  t.same(limitHeaders(limited), { limit: 4, remaining: 0, reset: 1 }, 'the headers report the tenant bucket');
  t.equal(limited.headers['retry-after'], '1');
  t.match(limited.body.message, /4 requests per second/);
  t.equal((await call(test.app, 'GET', '/whoami', { token: owner.token })).status, 429, "the owner's session is in the tenant too");

  const other = await registerTenant(test.app);
  t.equal((await call(test.app, 'GET', '/whoami', { token: other.token })).status, 200, 'another tenant has its own per-second bucket');

  await test.sql`insert into tenant_rate_limits (tenant_id, api_requests_per_sec) values (${owner.tenantId}, 6)`;
  t.same(await getMany(test, '/whoami', a.key, 3), [200, 200, 429], 'the override (6) takes effect at once: 2 more this second');
  const over = await call(test.app, 'GET', '/whoami', { token: b.key });
  t.equal(limitHeaders(over).limit, 6);

  test.clock.advance(2000); // past this second and the next, over which it slides out
  t.same(await getMany(test, '/whoami', a.key, 7), [...repeat(200, 6), 429], 'two seconds on: 6 again');

  await test.sql`update tenant_rate_limits set api_requests_per_sec = null where tenant_id = ${owner.tenantId}`;
  test.clock.advance(2000);
  t.same(await getMany(test, '/whoami', b.key, 5), [...repeat(200, 4), 429], 'a null override falls back to the default');
});

t.test('a per-day override caps the tenant across seconds', async (t) => {
  const test = await frozenApp(t, {
    [`${L}PER_MINUTE__READ`]: '100',
    [`${L}TENANT_DEFAULT_PER_SEC`]: '100',
    [`${L}OVERRIDE_CACHE_MS`]: '0',
  });
  const owner = await registerTenant(test.app);
  const { key } = await createKey(test.app, owner);
  const other = await registerTenant(test.app);

  t.same(await getMany(test, '/whoami', key, 2), [200, 200], 'no daily cap without an override');
  await test.sql`insert into tenant_rate_limits (tenant_id, api_requests_per_day, notes) values (${owner.tenantId}, 5, 'trial')`;

  t.same(await getMany(test, '/whoami', key, 6), [...repeat(200, 5), 429], 'the daily window starts with this override: 5 more, then 429');
  test.clock.advance(1000);
  const limited = await call(test.app, 'GET', '/whoami', { token: owner.token });
  t.equal(limited.status, 429, 'still refused in a later second, and for a session of the tenant too');
  const now = test.clock.now().getTime();
  const toMidnight = Math.ceil((Math.floor(now / 86_400_000 + 1) * 86_400_000 - now) / 1000);
  t.same(limitHeaders(limited), { limit: 5, remaining: 0, reset: toMidnight }, 'the headers report the daily bucket');
  t.equal(limited.headers['retry-after'], String(toMidnight), 'Retry-After runs to just past 00:00 UTC, when the day starts sliding out');
  t.match(limited.body.message, /5 requests per day/);
  t.equal((await call(test.app, 'GET', '/whoami', { token: other.token })).status, 200, 'other tenants are unaffected');

  test.clock.set(new Date(Math.floor(now / 86_400_000 + 1) * 86_400_000 + 30_500));
  t.equal((await call(test.app, 'GET', '/whoami', { token: key })).status, 200, 'past 00:00 UTC the previous day begins to slide out: one is free');
  t.equal((await call(test.app, 'GET', '/whoami', { token: key })).status, 429, 'but no fresh daily allowance: the cap covers a sliding 24 h');
});
