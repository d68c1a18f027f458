// /analytics/rollup and /analytics/cohort-retention on an injected clock with seeded events: rollup tables refreshed by the analytics-rollup worker
// (run-now), hours not rolled up yet counted live, buckets, machine opens and scanner clicks left out, the 90-day cap; cohort boundaries, empty weeks,
// future cells and the one-hour cache.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { LIVE_HOURS_MAX } from '../../../shared/engagement/analytics/queries.js';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';

const clock = new ManualClock(new Date('2026-05-06T10:00:00Z')); // a Wednesday; the week began Monday 2026-05-04
const { app, sql } = await buildTestApp(t, { clock });
const owner = await registerTenant(app);
const other = await registerTenant(app);
// Keys, not session tokens: the clock moves past a session's lifetime in the cache test.
const ownerKey = (await createKey(app, owner, { scopes: ['events:read'] })).key;
const otherKey = (await createKey(app, other, { scopes: ['events:read'] })).key;
const admin = await superAdminToken(app);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

async function event(tenantId: string, type: string, at: string | Date, o: { recipient?: string; detail?: Record<string, unknown>; subtype?: string } = {}) {
  await sql`
    insert into events (id, tenant_id, type, subtype, recipient, detail, occurred_at)
    values (${randomUUID()}, ${tenantId}, ${type}, ${o.subtype ?? (type === 'bounce' ? 'hard' : null)}, ${o.recipient ?? 'r@dest.example'},
      ${sql.json((o.detail ?? {}) as never)}, ${new Date(at)})`;
}

async function contact(tenantId: string, email: string, createdAt: string) {
  await sql`insert into contacts (tenant_id, email, created_at, updated_at) values (${tenantId}, ${email}, ${createdAt}, ${createdAt})`;
}

async function get(url: string, key = ownerKey) {
  return call(app, 'GET', url, { token: key });
}

/** The worker's run-now path, as an operator triggers it. */
async function runRollupWorker() {
  const res = await call(app, 'POST', '/admin/workers/analytics-rollup/run-now', { token: admin });
  if (res.status !== 200) throw new Error(`run-now: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

t.test('rollup: read from the rollup tables, refreshed by the worker; buckets, human engagement, late events', async (t) => {
  await event(owner.tenantId, 'send', '2026-05-06T08:15:00Z');
  await event(owner.tenantId, 'send', '2026-05-06T08:16:00Z');
  await event(owner.tenantId, 'send', '2026-05-06T08:17:00Z', { detail: { status: 'dropped' } });
  await event(owner.tenantId, 'delivered', '2026-05-06T08:20:00Z');
  await event(owner.tenantId, 'bounce', '2026-05-06T08:21:00Z');
  await event(owner.tenantId, 'open', '2026-05-06T08:30:00Z', { detail: { machine: false } });
  await event(owner.tenantId, 'open', '2026-05-06T08:31:00Z', { detail: { machine: true } });
  await event(owner.tenantId, 'click', '2026-05-06T08:40:00Z', { detail: { scanner: false, url: 'https://x.example/' } });
  await event(owner.tenantId, 'click', '2026-05-06T08:41:00Z', { detail: { scanner: true, url: 'https://x.example/' } });
  await event(owner.tenantId, 'complaint', '2026-05-06T08:59:59.999Z');
  await event(owner.tenantId, 'send', '2026-05-05T23:30:00Z');
  // The other tenant's events of the same hour never count for the owner.
  await event(other.tenantId, 'send', '2026-05-06T08:15:00Z');

  const before = await get('/analytics/rollup?since=2026-05-06T00:00:00Z&until=2026-05-06T10:00:00Z&granularity=hour');
  t.equal(before.status, 200);
  t.same(
    before.body.data.buckets[8],
    { start: '2026-05-06T08:00:00.000Z', sent: 2, delivered: 1, bounced: 1, opened: 1, clicked: 1, complained: 1 },
    'before the worker ran, an hour not rolled up yet is counted from its events: a read right after a send counts it',
  );

  const run = await runRollupWorker();
  t.equal(run.outcome, 'ok');
  t.ok((run.result as { hours_refreshed: number }).hours_refreshed >= 3);
  t.equal((await sql`select count(*)::int as n from analytics_stale_hours`)[0]!['n'], 0, 'every stale hour recomputed');

  const hourly = await get('/analytics/rollup?since=2026-05-06T00:00:00Z&until=2026-05-06T10:00:00Z&granularity=hour');
  t.equal(hourly.status, 200);
  const h = hourly.body.data;
  t.equal(h.granularity, 'hour');
  t.equal(h.since, '2026-05-06T00:00:00.000Z');
  t.equal(h.until, '2026-05-06T10:00:00.000Z');
  t.equal(h.buckets.length, 11, 'every hour from 00:00 to 10:00, empty ones included');
  t.same(h.buckets[8], { start: '2026-05-06T08:00:00.000Z', sent: 2, delivered: 1, bounced: 1, opened: 1, clicked: 1, complained: 1 });
  t.same(h.buckets[0], { start: '2026-05-06T00:00:00.000Z', sent: 0, delivered: 0, bounced: 0, opened: 0, clicked: 0, complained: 0 });

  const withMachines = await get('/analytics/rollup?since=2026-05-06T00:00:00Z&until=2026-05-06T10:00:00Z&granularity=hour&include_machine=true');
  t.match(withMachines.body.data.buckets[8], { opened: 2, clicked: 2 }, 'include_machine counts machine opens and scanner clicks');

  // Default: day buckets over the last 30 days (31 buckets: the one holding since to today).
  const daily = await get('/analytics/rollup');
  t.equal(daily.status, 200);
  t.equal(daily.body.data.granularity, 'day');
  t.equal(daily.body.data.until, clock.now().toISOString());
  t.equal(daily.body.data.since, new Date(clock.now().getTime() - 30 * DAY).toISOString());
  t.equal(daily.body.data.buckets.length, 31);
  t.same(daily.body.data.buckets.slice(-2), [
    { start: '2026-05-05T00:00:00.000Z', sent: 1, delivered: 0, bounced: 0, opened: 0, clicked: 0, complained: 0 },
    { start: '2026-05-06T00:00:00.000Z', sent: 2, delivered: 1, bounced: 1, opened: 1, clicked: 1, complained: 1 },
  ]);

  // A late event (a bounce report for mail of three days ago) marks its own hour; the next tick counts it.
  await event(owner.tenantId, 'bounce', '2026-05-03T12:00:00Z', { subtype: 'soft' });
  t.equal((await sql`select count(*)::int as n from analytics_stale_hours`)[0]!['n'], 1);
  await runRollupWorker();
  const late = await get('/analytics/rollup?since=2026-05-03T00:00:00Z&until=2026-05-04T00:00:00Z');
  t.same(
    late.body.data.buckets.map((b: { bounced: number }) => b.bounced),
    [1, 0],
  );

  // A click flagged as a scanner's afterwards (the "every link at once" rule) is re-counted.
  await sql`update events set detail = detail || '{"scanner": true}'
            where tenant_id = ${owner.tenantId} and type = 'click' and occurred_at = '2026-05-06T08:40:00Z'`;
  await runRollupWorker();
  const flagged = await get('/analytics/rollup?since=2026-05-06T08:00:00Z&until=2026-05-06T08:00:00Z&granularity=hour');
  t.same(flagged.body.data.buckets, [{ start: '2026-05-06T08:00:00.000Z', sent: 2, delivered: 1, bounced: 1, opened: 1, clicked: 0, complained: 1 }]);

  const theirs = await get('/analytics/rollup?since=2026-05-06T08:00:00Z&until=2026-05-06T08:00:00Z&granularity=hour', otherKey);
  t.same(
    theirs.body.data.buckets,
    [{ start: '2026-05-06T08:00:00.000Z', sent: 1, delivered: 0, bounced: 0, opened: 0, clicked: 0, complained: 0 }],
    'each tenant sees only its own',
  );
});

t.test(`rollup: at most the latest ${LIVE_HOURS_MAX} hours not rolled up yet are counted live; older ones wait for the worker`, async (t) => {
  const tenant = await registerTenant(app);
  const key = (await createKey(app, tenant, { scopes: ['events:read'] })).key;
  // One send in each of the 8 hours 00:00..07:00 of 2026-05-01, none rolled up.
  for (let h = 0; h < 8; h++) await event(tenant.tenantId, 'send', new Date(Date.parse('2026-05-01T00:30:00Z') + h * HOUR));
  const read = await get('/analytics/rollup?since=2026-05-01T00:00:00Z&until=2026-05-01T07:59:00Z&granularity=hour', key);
  t.same(
    read.body.data.buckets.map((b: { sent: number }) => b.sent),
    [0, 0, 1, 1, 1, 1, 1, 1],
    `the latest ${LIVE_HOURS_MAX} are live`,
  );
  await runRollupWorker();
  const after = await get('/analytics/rollup?since=2026-05-01T00:00:00Z&until=2026-05-01T07:59:00Z&granularity=hour', key);
  t.same(
    after.body.data.buckets.map((b: { sent: number }) => b.sent),
    [1, 1, 1, 1, 1, 1, 1, 1],
    'the worker rolls all of them up',
  );
});

t.test('rollup: the range is capped at 90 days', async (t) => {
  const now = clock.now().getTime();
  const at = (ms: number) => encodeURIComponent(new Date(ms).toISOString());
  const ninety = await get(`/analytics/rollup?since=${at(now - 90 * DAY)}&until=${at(now)}&granularity=hour`);
  t.equal(ninety.status, 200, 'exactly 90 days is allowed');
  t.equal(ninety.body.data.buckets.length, 90 * 24 + 1);
  for (const q of [`since=${at(now - 90 * DAY - 1000)}`, `since=${at(now - 200 * DAY)}&until=${at(now - 100 * DAY)}`]) {
    const res = await get(`/analytics/rollup?${q}`);
    t.equal(res.status, 422, q);
    t.equal(res.body.error, 'validation_error');
  }
  const reversed = await get(`/analytics/rollup?since=${at(now)}&until=${at(now - DAY)}`);
  t.equal(reversed.status, 422);
  t.equal(reversed.body.error, 'validation_error');
  t.equal((await get('/analytics/rollup?since=yesterday')).status, 422, 'not RFC 3339');
  t.equal((await get('/analytics/rollup?granularity=week')).status, 422);
});

t.test('cohort retention: week boundaries, empty weeks, future cells, metrics', async (t) => {
  const tenant = await registerTenant(app);
  const key = (await createKey(app, tenant, { scopes: ['events:read'] })).key;
  // weeks=4: cohorts of 2026-04-13, 04-20 (empty), 04-27 and 05-04 (the current week).
  await contact(tenant.tenantId, 'before@c.example', '2026-04-12T23:59:59Z'); // the Sunday before: outside
  await contact(tenant.tenantId, 'a@c.example', '2026-04-13T00:00:00Z'); // first instant of cohort 0
  await contact(tenant.tenantId, 'b@c.example', '2026-04-19T23:59:59Z'); // last second of cohort 0
  await contact(tenant.tenantId, 'c@c.example', '2026-04-27T12:00:00Z');
  await contact(tenant.tenantId, 'd@c.example', '2026-05-05T08:00:00Z');
  const open = (r: string, at: string, machine = false) => event(tenant.tenantId, 'open', at, { recipient: r, detail: { machine } });
  await open('a@c.example', '2026-04-14T10:00:00Z');
  await open('a@c.example', '2026-04-15T10:00:00Z'); // a second open the same week counts once
  await open('a@c.example', '2026-04-28T10:00:00Z'); // week 2 of cohort 0
  await open('b@c.example', '2026-04-19T12:00:00Z', true); // machine open: left out
  await open('b@c.example', '2026-04-20T00:00:00Z'); // first instant of week 1
  await open('before@c.example', '2026-04-14T10:00:00Z');
  await open('d@c.example', '2026-05-06T09:00:00Z');
  await event(tenant.tenantId, 'click', '2026-04-28T10:00:00Z', { recipient: 'c@c.example', detail: { scanner: false } });
  await event(tenant.tenantId, 'send', '2026-04-13T09:00:00Z', { recipient: 'a@c.example' });
  await event(tenant.tenantId, 'send', '2026-04-27T09:00:00Z', { recipient: 'c@c.example' });

  const res = await get('/analytics/cohort-retention?weeks=4', key);
  t.equal(res.status, 200);
  t.same(res.body.data, {
    cohort: 'acquisition_week',
    metric: 'opened',
    max_weeks: 4,
    cohorts: [
      { week_start: '2026-04-13', size: 2, active: [1, 1, 1, 0], retention: [0.5, 0.5, 0.5, 0] },
      { week_start: '2026-04-20', size: 0, active: [0, 0, 0, null], retention: [null, null, null, null] },
      { week_start: '2026-04-27', size: 1, active: [0, 0, null, null], retention: [0, 0, null, null] },
      { week_start: '2026-05-04', size: 1, active: [1, null, null, null], retention: [1, null, null, null] },
    ],
  });

  const clicked = (await get('/analytics/cohort-retention?weeks=4&metric=clicked', key)).body.data;
  t.same(
    clicked.cohorts.map((c: { active: unknown[] }) => c.active),
    [
      [0, 0, 0, 0],
      [0, 0, 0, null],
      [1, 0, null, null],
      [0, null, null, null],
    ],
  );
  const sent = (await get('/analytics/cohort-retention?weeks=4&metric=sent', key)).body.data;
  t.same(
    sent.cohorts.map((c: { active: unknown[] }) => c.active),
    [
      [1, 0, 0, 0],
      [0, 0, 0, null],
      [1, 0, null, null],
      [0, null, null, null],
    ],
  );

  const defaults = (await get('/analytics/cohort-retention', key)).body.data;
  t.equal(defaults.max_weeks, 8);
  t.equal(defaults.metric, 'opened');
  t.equal(defaults.cohorts.length, 8);
  t.equal(defaults.cohorts[0].week_start, '2026-03-16');
  t.same(defaults.cohorts[7].active, [1, null, null, null, null, null, null, null]);
  t.same(defaults.cohorts[0].active, [0, 0, 0, 0, 0, 0, 0, 0], 'the oldest cohort has no future cell');

  for (const bad of ['weeks=3', 'weeks=13', 'weeks=x', 'metric=bounced', 'cohort=signup_month']) {
    const r = await get(`/analytics/cohort-retention?${bad}`, key);
    t.equal(r.status, 422, bad);
    t.equal(r.body.error, 'validation_error', bad);
  }
  t.equal((await get('/analytics/cohort-retention?cohort=acquisition_week&weeks=12', key)).body.data.cohorts.length, 12);
});

t.test('cohort retention: cached one hour per (tenant, metric, weeks)', async (t) => {
  const tenant = await registerTenant(app);
  const key = (await createKey(app, tenant, { scopes: ['events:read'] })).key;
  await contact(tenant.tenantId, 'e@c.example', '2026-05-04T09:00:00Z');
  const current = async (q: string) => (await get(`/analytics/cohort-retention?weeks=4${q}`, key)).body.data.cohorts[3].active[0];
  t.equal(await current(''), 0);
  t.equal(await current('&metric=clicked'), 0);
  await event(tenant.tenantId, 'open', clock.now(), { recipient: 'e@c.example' });
  t.equal(await current(''), 0, 'cached: the new open is not seen yet');
  t.equal((await get('/analytics/cohort-retention?weeks=5', key)).body.data.cohorts[4].active[0], 1, 'another weeks value is another cache entry');
  t.equal(await current('&metric=clicked'), 0);
  clock.advance(HOUR - 1000);
  t.equal(await current(''), 0, 'still cached just before the hour');
  clock.advance(1000);
  t.equal(await current(''), 1, 'recomputed once the hour has passed');
  t.equal((await get('/analytics/cohort-retention?weeks=4', ownerKey)).body.data.cohorts[3].size, 0, 'another tenant has its own entry');
  clock.set(new Date('2026-05-06T10:00:00Z'));
});

t.test('scopes: events:read for rollup, cohort and esp-scores; reputation:read for esp-suppressions and trust-score', async (t) => {
  const events = ownerKey;
  const reputation = (await createKey(app, owner, { scopes: ['reputation:read'] })).key;
  const eventsRoutes = ['/analytics/rollup', '/analytics/cohort-retention', '/analytics/esp-scores'];
  const reputationRoutes = ['/analytics/esp-suppressions', '/analytics/trust-score'];
  for (const url of eventsRoutes) {
    t.equal((await get(url, events)).status, 200, `${url} with events:read`);
    const refused = await get(url, reputation);
    t.equal(refused.status, 403, `${url} without events:read`);
    t.equal(refused.body.error, 'invalid_scope');
  }
  for (const url of reputationRoutes) {
    t.equal((await get(url, reputation)).status, 200, `${url} with reputation:read`);
    const refused = await get(url, events);
    t.equal(refused.status, 403, `${url} without reputation:read`);
    t.equal(refused.body.error, 'invalid_scope');
  }
  for (const url of [...eventsRoutes, ...reputationRoutes]) t.equal((await call(app, 'GET', url)).status, 401, `${url} without a credential`);
  const signedIn = await call(app, 'POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
  for (const url of [...eventsRoutes, ...reputationRoutes]) t.equal((await get(url, signedIn.body.data.token)).status, 200, `${url} with a session`);
});
