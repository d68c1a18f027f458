// API key activity through real requests: usage per day, one key's activity, rate-limit status, refused calls, suspicion, pruning.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { findWorker, runWorker } from '../../../shared/operations/workers/catalog.js';
import { buildTestApp, call, createKey, registerTenant, type TestApp } from '../../helpers/app.js';

const FAKE_ID = '0b9c4d2e-1f3a-4b5c-8d6e-7f8091a2b3c4';
const NOW = new Date('2030-06-15T11:00:00Z');
const DAY = 86_400_000;

/** A request made with an API key from a client address. */
async function keyCall(s: TestApp, key: string, method: 'GET' | 'POST', url: string, options: { ip?: string; body?: unknown } = {}): Promise<number> {
  const res = await s.app.inject({
    method,
    url: `/api/v1${url}`,
    remoteAddress: options.ip ?? '127.0.0.1',
    headers: { authorization: `Bearer ${key}`, ...(options.body ? { 'content-type': 'application/json' } : {}) },
    ...(options.body ? { payload: JSON.stringify(options.body) } : {}),
  });
  return res.statusCode;
}

async function repeat(times: number, fn: () => Promise<unknown>): Promise<void> {
  for (let i = 0; i < times; i++) await fn();
}

async function flush(s: TestApp): Promise<void> {
  await s.app.keyActivity.flush();
  await s.ctx.keyUsage.flush();
}

async function setup(t: Tap, env: Record<string, string> = {}) {
  const clock = new ManualClock(NOW);
  const s = await buildTestApp(t, { clock, env });
  // Registered "now": the session stays valid while the clock visits the past days.
  const owner = await registerTenant(s.app);
  return { s, clock, owner };
}
type Tap = Parameters<typeof buildTestApp>[0];

t.test('usage: requests per key and UTC day over 1..30 days, unrevoked keys only, with last use', async (t) => {
  const { s, clock, owner } = await setup(t);
  const a = await createKey(s.app, owner, { name: 'alpha' });
  const b = await createKey(s.app, owner, { name: 'beta' });
  const c = await createKey(s.app, owner, { name: 'gone' });
  clock.set(new Date('2030-06-13T09:00:00Z'));
  await repeat(2, () => keyCall(s, a.key, 'GET', '/whoami'));
  await keyCall(s, c.key, 'GET', '/whoami');
  clock.set(NOW);
  await repeat(3, () => keyCall(s, a.key, 'GET', '/whoami'));
  t.equal(await keyCall(s, a.key, 'GET', `/templates/${FAKE_ID}`), 404);
  await keyCall(s, b.key, 'GET', '/whoami', { ip: '192.0.2.7' });
  t.equal((await call(s.app, 'DELETE', `/api-keys/${c.id}`, { token: owner.token })).status, 200);
  await flush(s);

  const res = await call(s.app, 'GET', '/api-keys/usage', { token: owner.token });
  t.equal(res.status, 200);
  t.equal(res.body.data.days, 7, 'default 7 days');
  const items = res.body.data.items as {
    key_id: string;
    name: string;
    prefix: string;
    total: number;
    series: { date: string; count: number }[];
    last_used_at: string;
    last_used_ip: string;
  }[];
  t.same(items.map((i) => i.name).sort(), ['alpha', 'beta'], 'the revoked key is left out');
  const alpha = items.find((i) => i.key_id === a.id)!;
  t.equal(alpha.total, 6);
  t.match(alpha.prefix, /^mp_live_/);
  t.same(
    alpha.series.map((d) => d.date),
    ['2030-06-09', '2030-06-10', '2030-06-11', '2030-06-12', '2030-06-13', '2030-06-14', '2030-06-15'],
  );
  t.same(
    alpha.series.map((d) => d.count),
    [0, 0, 0, 0, 2, 0, 4],
  );
  t.ok(alpha.last_used_at, 'last use recorded');
  const beta = items.find((i) => i.key_id === b.id)!;
  t.equal(beta.total, 1);
  t.equal(beta.last_used_ip, '192.0.2.7');

  const one = await call(s.app, 'GET', '/api-keys/usage?days=1', { token: owner.token });
  t.same(one.body.data.items.find((i: { key_id: string }) => i.key_id === a.id).series, [{ date: '2030-06-15', count: 4 }]);
  t.equal((await call(s.app, 'GET', '/api-keys/usage?days=30', { token: owner.token })).body.data.items[0].series.length, 30);
  for (const days of ['0', '31', 'abc', '2.5', '-1']) {
    const bad = await call(s.app, 'GET', `/api-keys/usage?days=${days}`, { token: owner.token });
    t.equal(bad.status, 422, `days=${days}`);
    t.match(bad.body.message, /^days/);
  }
  const other = await registerTenant(s.app);
  t.same((await call(s.app, 'GET', '/api-keys/usage', { token: other.token })).body.data.items, [], 'another tenant sees none of it');
});

t.test('activity: 30 days per day, top routes, status histogram, p95, not suspicious for ordinary traffic', async (t) => {
  const { s, clock, owner } = await setup(t);
  const a = await createKey(s.app, owner);
  clock.set(new Date(NOW.getTime() - 29 * DAY));
  await keyCall(s, a.key, 'GET', '/whoami');
  clock.set(new Date(NOW.getTime() - 30 * DAY));
  await keyCall(s, a.key, 'GET', '/whoami');
  clock.set(NOW);
  await repeat(4, () => keyCall(s, a.key, 'GET', '/whoami'));
  await repeat(2, () => keyCall(s, a.key, 'GET', '/templates'));
  await keyCall(s, a.key, 'GET', `/templates/${FAKE_ID}`);
  await flush(s);

  const res = await call(s.app, 'GET', `/api-keys/${a.id}/activity`, { token: owner.token });
  t.equal(res.status, 200);
  const act = res.body.data;
  t.equal(act.calls_per_day.length, 30);
  t.same(act.calls_per_day[0], { date: '2030-05-17', count: 1 }, 'the oldest of the 30 days; the day before is outside');
  t.same(act.calls_per_day[29], { date: '2030-06-15', count: 7 });
  t.same(act.top_endpoints, [
    { route: 'GET /whoami', count: 5, errors: 0 },
    { route: 'GET /templates', count: 2, errors: 0 },
    { route: 'GET /templates/:id', count: 1, errors: 1 },
  ]);
  t.same(act.status_codes, [
    { status: 200, count: 7 },
    { status: 404, count: 1 },
  ]);
  t.type(act.p95_latency_ms, 'number');
  t.ok(Number.isFinite(act.p95_latency_ms) && act.p95_latency_ms > 0, "a measured p95 (how fast is the bench's business, not a test's)");
  t.same(act.suspicious, { flag: false, reasons: [] });

  const fresh = await createKey(s.app, owner);
  const empty = (await call(s.app, 'GET', `/api-keys/${fresh.id}/activity`, { token: owner.token })).body.data;
  t.equal(empty.p95_latency_ms, null, 'no requests: no latency');
  t.same(empty.top_endpoints, []);
  t.equal(
    empty.calls_per_day.reduce((n: number, d: { count: number }) => n + d.count, 0),
    0,
  );
});

t.test('top endpoints stop at 10 routes', async (t) => {
  const { s, owner } = await setup(t);
  const a = await createKey(s.app, owner);
  const urls = [
    '/whoami',
    '/templates',
    '/suppressions',
    '/events',
    '/sends',
    '/domains',
    '/api-keys',
    `/templates/${FAKE_ID}`,
    `/suppressions/${FAKE_ID}`,
    `/sends/${FAKE_ID}`,
    `/domains/${FAKE_ID}`,
    '/settings/inbound-webhook',
  ];
  for (const url of urls) await keyCall(s, a.key, 'GET', url);
  await flush(s);
  const act = (await call(s.app, 'GET', `/api-keys/${a.id}/activity`, { token: owner.token })).body.data;
  t.equal(act.top_endpoints.length, 10);
  t.equal(
    act.status_codes.reduce((n: number, c: { count: number }) => n + c.count, 0),
    12,
  );
});

t.test("another tenant's key, an unknown key and a malformed id are 404", async (t) => {
  const { s, owner } = await setup(t);
  const other = await registerTenant(s.app);
  const theirs = await createKey(s.app, other);
  for (const id of [theirs.id, FAKE_ID, 'not-a-key']) {
    for (const tail of ['activity', 'rate-limit-status']) {
      const res = await call(s.app, 'GET', `/api-keys/${id}/${tail}`, { token: owner.token });
      t.equal(res.status, 404, `${tail} of ${id}`);
      t.equal(res.body.error, 'not_found');
    }
  }
  const key = await createKey(s.app, owner);
  t.equal((await call(s.app, 'GET', '/api-keys/usage', { token: key.key })).status, 403, 'the views take sessions, not keys');
});

t.test('rate-limit status: current minute, last 60 minutes and the UTC day, with unwritten counts, without double counting', async (t) => {
  const { s, clock, owner } = await setup(t);
  const a = await createKey(s.app, owner, { name: 'busy' });
  clock.set(new Date('2030-06-14T23:59:30Z'));
  await keyCall(s, a.key, 'GET', '/whoami');
  clock.set(new Date('2030-06-15T00:10:00Z'));
  await repeat(2, () => keyCall(s, a.key, 'GET', '/whoami'));
  clock.set(new Date('2030-06-15T10:31:00Z'));
  await keyCall(s, a.key, 'GET', '/whoami');
  clock.set(new Date('2030-06-15T11:00:10Z'));
  await repeat(3, () => keyCall(s, a.key, 'GET', '/whoami'));
  await s.app.keyActivity.flush();
  clock.set(new Date('2030-06-15T11:00:40Z'));
  t.equal(await keyCall(s, a.key, 'GET', `/templates/${FAKE_ID}`), 404, 'refused calls count too');

  const status = async () => (await call(s.app, 'GET', `/api-keys/${a.id}/rate-limit-status`, { token: owner.token })).body.data;
  const expected = { key_id: a.id, key_name: 'busy', requests_last_minute: 4, requests_last_hour: 5, requests_today: 7 };
  t.same(await status(), expected, 'stored counts plus the one not yet written');
  await s.app.keyActivity.flush();
  t.same(await status(), expected, 'after the flush: the same, nothing counted twice');
  clock.advance(120_000);
  t.match(await status(), { requests_last_minute: 0, requests_last_hour: 5, requests_today: 7 });
  clock.set(new Date('2030-06-16T00:00:01Z'));
  // The owner's session has ended by now: sign in again.
  const login = await call(s.app, 'POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
  const next = await call(s.app, 'GET', `/api-keys/${a.id}/rate-limit-status`, { token: login.body.data.token });
  t.match(next.body.data, { requests_last_minute: 0, requests_last_hour: 0, requests_today: 0 });
});

t.test('refused calls of a known key count against it (403 scope or route, 401 once revoked); unknown secrets and public routes do not', async (t) => {
  const { s, owner } = await setup(t);
  const reader = await createKey(s.app, owner, { scopes: ['templates:read'] });
  t.equal(await keyCall(s, reader.key, 'POST', '/templates', { body: { name: 'n', subject: 's', body_text: 't' } }), 403);
  t.equal(await keyCall(s, reader.key, 'GET', '/api-keys'), 403, 'a session-only route');
  t.equal(await keyCall(s, reader.key, 'GET', '/no/such/route'), 404);
  t.equal(await keyCall(s, reader.key, 'POST', '/auth/login', { body: { email: 'x@example.test', password: 'nope-nope-1' } }), 401, 'public route');
  t.equal((await call(s.app, 'DELETE', `/api-keys/${reader.id}`, { token: owner.token })).status, 200);
  await repeat(2, async () => t.equal(await keyCall(s, reader.key, 'GET', '/whoami'), 401));
  t.equal(await keyCall(s, `mp_live_${'x'.repeat(40)}`, 'GET', '/whoami'), 401);
  await flush(s);

  const act = (await call(s.app, 'GET', `/api-keys/${reader.id}/activity`, { token: owner.token })).body.data;
  t.same(
    act.status_codes,
    [
      { status: 401, count: 2 },
      { status: 403, count: 2 },
      { status: 404, count: 1 },
    ],
    "a revoked key's activity is still shown",
  );
  t.same(act.top_endpoints.map((e: { route: string }) => e.route).sort(), ['GET (no such route)', 'GET /api-keys', 'GET /whoami', 'POST /templates']);
  const [all] = await s.sql<{ n: number }[]>`select sum(count)::int as n from api_key_activity`;
  t.equal(all!.n, 5, 'the unknown secret and the public route were not counted');
});

t.test("suspicious: a burst of 401/403s, a new client address, an error-rate spike against the key's baseline", async (t) => {
  const { s, clock, owner } = await setup(t, {
    MAILPATH_CONFIG__LIMITS__KEY_ACTIVITY__SUSPICIOUS__AUTH_FAILURE_THRESHOLD: '3',
    MAILPATH_CONFIG__LIMITS__KEY_ACTIVITY__SUSPICIOUS__ERROR_RATE_MIN_REQUESTS: '5',
  });
  const judge = async (id: string) => (await call(s.app, 'GET', `/api-keys/${id}/activity`, { token: owner.token })).body.data.suspicious;

  const scoped = await createKey(s.app, owner, { scopes: ['templates:read'] });
  await repeat(2, () => keyCall(s, scoped.key, 'POST', '/templates', { body: { name: 'n', subject: 's', body_text: 't' } }));
  await flush(s);
  t.same(await judge(scoped.id), { flag: false, reasons: [] }, 'two refusals: below the threshold');
  await keyCall(s, scoped.key, 'POST', '/templates', { body: { name: 'n', subject: 's', body_text: 't' } });
  await flush(s);
  const burst = await judge(scoped.id);
  t.equal(burst.flag, true);
  t.match(burst.reasons, [/^auth_failure_burst: 3 answers 401\/403 in the last 10 minutes \(threshold 3\)/]);
  clock.advance(11 * 60_000);
  t.same(await judge(scoped.id), { flag: false, reasons: [] }, 'the burst leaves the window');

  clock.set(NOW);
  const roaming = await createKey(s.app, owner);
  clock.set(new Date(NOW.getTime() - 5 * DAY));
  await keyCall(s, roaming.key, 'GET', '/whoami', { ip: '198.51.100.1' });
  clock.set(NOW);
  await keyCall(s, roaming.key, 'GET', '/whoami', { ip: '198.51.100.1' });
  await keyCall(s, roaming.key, 'GET', '/whoami', { ip: '203.0.113.9' });
  const newcomer = await createKey(s.app, owner);
  await keyCall(s, newcomer.key, 'GET', '/whoami', { ip: '203.0.113.50' });
  await flush(s);
  const roam = await judge(roaming.id);
  t.equal(roam.flag, true);
  t.same(roam.reasons, ['new_client_address: 203.0.113.9 (not seen in the 14 days before)']);
  t.same(await judge(newcomer.id), { flag: false, reasons: [] }, 'a key without history has no baseline to differ from');

  const failing = await createKey(s.app, owner);
  const steady = await createKey(s.app, owner);
  clock.set(new Date(NOW.getTime() - 3 * DAY));
  await repeat(20, () => keyCall(s, failing.key, 'GET', '/whoami'));
  await repeat(10, () => keyCall(s, steady.key, 'GET', '/whoami'));
  await repeat(10, () => keyCall(s, steady.key, 'GET', `/templates/${FAKE_ID}`));
  clock.set(NOW);
  await repeat(2, () => keyCall(s, failing.key, 'GET', '/whoami'));
  await repeat(4, () => keyCall(s, failing.key, 'GET', `/templates/${FAKE_ID}`));
  await repeat(3, () => keyCall(s, steady.key, 'GET', '/whoami'));
  await repeat(3, () => keyCall(s, steady.key, 'GET', `/templates/${FAKE_ID}`));
  await flush(s);
  const spike = await judge(failing.id);
  t.equal(spike.flag, true);
  t.same(spike.reasons, ['error_rate_spike: 66.7% of 6 requests failed in the last 60 minutes (baseline 0% over the 7 days before)']);
  t.same(await judge(steady.id), { flag: false, reasons: [] }, 'a key that always fails this much is not spiking');
});

t.test('the hourly prune worker deletes activity older than retention_days', async (t) => {
  const { s, clock, owner } = await setup(t);
  const a = await createKey(s.app, owner);
  clock.set(new Date(NOW.getTime() - 40 * DAY));
  await keyCall(s, a.key, 'GET', '/whoami', { ip: '198.51.100.40' });
  clock.set(NOW);
  await keyCall(s, a.key, 'GET', '/whoami');
  await flush(s);
  const worker = findWorker('key-activity-prune')!;
  t.ok(worker, 'in the catalog');
  const run = await runWorker(s.ctx, worker);
  t.equal(run.outcome, 'ok');
  t.same(run.result, { minutes: 1, clients: 1 });
  const [left] = await s.sql<{ n: number }[]>`select sum(count)::int as n from api_key_activity`;
  t.equal(left!.n, 1);
  const [tick] = await s.sql<{ last_tick_outcome: string }[]>`select last_tick_outcome from worker_ticks where name = 'key-activity-prune'`;
  t.equal(tick!.last_tick_outcome, 'ok');
});

t.test('closing the app writes the counts still in memory', async (t) => {
  const { s, owner } = await setup(t);
  const a = await createKey(s.app, owner);
  await repeat(3, () => keyCall(s, a.key, 'GET', '/whoami'));
  t.equal((await s.sql`select 1 from api_key_activity`).length, 0, 'nothing written yet (flush interval 5 s)');
  await s.app.close();
  const [row] = await s.sql<{ n: number }[]>`select sum(count)::int as n from api_key_activity`;
  t.equal(row!.n, 3);
});
