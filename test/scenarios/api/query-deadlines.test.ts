// Tenant-shaped queries have deadlines and per-tenant caps: a rule set too expensive for its deadline is a 422 naming it, a search or analytics read past
// its deadline a 503 with Retry-After, a tenant's excess heavy queries 429 while another tenant's still run, and every connection comes back clean.
import t, { type Test } from 'tap';
import { loadConfig } from '../../../shared/config/index.js';
import type { Sql } from '../../../shared/db/connection.js';
import { TenantQueries } from '../../../shared/db/deadline.js';
import { buildTestApp, call, registerTenant, type TestApp } from '../../helpers/app.js';

const field = (f: string, operator: string, value?: unknown) => ({ type: 'field', field: f, operator, ...(value !== undefined ? { value } : {}) });

/** `n` contacts of the tenant, made in one statement (a hundred thousand take a few seconds). */
async function manyContacts(sql: Sql, tenantId: string, n: number): Promise<void> {
  await sql`
    insert into contacts (tenant_id, email, email_hash, first_name, custom_fields, created_at, updated_at)
    select ${tenantId}, 'person' || g || '@example' || (g % 97) || '.test', '\\x00', 'Name' || (g % 1000), jsonb_build_object('score', g % 500),
      now() - g * interval '1 second', now()
    from generate_series(1, ${n}) g`;
  await sql`analyze contacts`;
}

/**
 * A rule set that reads every contact of the tenant and tests each against many substrings: no index helps, so its
 * cost grows with contacts times rules (about a second over a hundred thousand contacts, against a 50 ms deadline).
 */
const EXPENSIVE = {
  op: 'OR',
  rules: [
    ...['zq1', 'zq2', 'zq3', 'zq4', 'zq5', 'zq6', 'zq7', 'zq8', 'zq9', 'zqa'].map((s) => field('email', 'contains', s)),
    ...['yq1', 'yq2', 'yq3', 'yq4', 'yq5', 'yq6', 'yq7', 'yq8', 'yq9', 'yqa'].map((s) => field('first_name', 'ends_with', s)),
  ],
};

/**
 * No statement of another session still runs and none sits in a transaction (a cancelled query's was rolled back),
 * and every connection of the app's pool (it holds four; four slow queries at once take all four) is back at the
 * server's default statement_timeout.
 */
async function assertCleanPool(t: Test, s: TestApp): Promise<void> {
  const [open] = await s.sql<{ n: number }[]>`
    select count(*)::int as n from pg_stat_activity
    where datname = current_database() and pid <> pg_backend_pid() and state in ('active', 'idle in transaction', 'idle in transaction (aborted)')`;
  t.equal(open!.n, 0, 'no statement still runs and no transaction stays open on the server');
  const seen = await Promise.all([0, 1, 2, 3].map(() => s.sql<{ timeout: string }[]>`select current_setting('statement_timeout') as timeout, pg_sleep(0.05)`));
  t.same(
    seen.map((r) => r[0]!.timeout),
    ['0', '0', '0', '0'],
    'no connection kept a deadline',
  );
}

/** Holds an ACCESS EXCLUSIVE lock on a table in a transaction of its own until release(): whatever reads it waits. */
async function holdLock(sql: Sql, table: string): Promise<{ release(): Promise<void> }> {
  const conn = await sql.reserve();
  await conn`begin`;
  await conn`lock table ${conn(table)} in access exclusive mode`;
  return {
    async release() {
      await conn`commit`;
      conn.release();
    },
  };
}

/** The answer of a request made while a lock is held, or a failure after 10 s (without a deadline it would wait for the lock). */
async function within<T>(request: Promise<T>, ms = 10_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([request, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits (bounded) until `n` statements of other sessions wait for a lock. */
async function lockWaiters(sql: Sql, n: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [row] = await sql<{ waiting: number }[]>`
      select count(*)::int as waiting from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`;
    if (row!.waiting >= n) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`fewer than ${n} statements came to wait for the lock within 5 s`);
}

t.test('a rule set too expensive for the segment deadline answers 422 naming it, never a late 200', async (t) => {
  const s = await buildTestApp(t, { env: { MAILPATH_CONFIG__QUERIES__DEADLINES_MS__SEGMENT: '50' } });
  const big = await registerTenant(s.app);
  const small = await registerTenant(s.app);
  await manyContacts(s.sql, big.tenantId, 100_000);
  await manyContacts(s.sql, small.tenantId, 20);

  const preview = await call(s.app, 'POST', '/segments/preview', { token: big.token, body: { definition: EXPENSIVE } });
  t.equal(preview.status, 422, 'a 422, not a late 200');
  t.equal(preview.body.error, 'validation_error');
  t.match(preview.body.message, /^definition: this rule set is too expensive to evaluate: .*the 50 ms deadline/);

  const saved = await call(s.app, 'POST', '/segments', { token: big.token, body: { name: 'Heavy', definition: EXPENSIVE } });
  t.equal(saved.status, 201, 'saving does not evaluate it');
  const count = await call(s.app, 'GET', `/segments/${saved.body.data.id}/count`, { token: big.token });
  t.equal(count.status, 422);
  t.match(count.body, { error: 'validation_error', message: /^definition: this rule set is too expensive/ });

  const cheap = await call(s.app, 'POST', '/segments/preview', { token: small.token, body: { definition: { op: 'AND', rules: [field('email', 'exists')] } } });
  t.same([cheap.status, cheap.body.data], [200, { count: 20 }], 'a definition within the deadline is counted');
  const bad = await call(s.app, 'POST', '/segments/preview', { token: big.token, body: { definition: { op: 'AND', rules: [field('nope', 'eq', 1)] } } });
  t.equal(bad.status, 422);
  t.match(bad.body.message, /^definition\.rules\[0\]\.field/, 'a bad rule is still named by its path');
  await assertCleanPool(t, s);
});

t.test('a contact search or analytics read past its deadline answers 503 with Retry-After; the connection is clean afterwards', async (t) => {
  const s = await buildTestApp(t, {
    env: { MAILPATH_CONFIG__QUERIES__DEADLINES_MS__CONTACT_SEARCH: '200', MAILPATH_CONFIG__QUERIES__DEADLINES_MS__ANALYTICS: '200' },
  });
  const owner = await registerTenant(s.app);
  await manyContacts(s.sql, owner.tenantId, 5);

  // A table held by another transaction: the read waits, and the wait counts towards its deadline.
  let lock = await holdLock(s.sql, 'contacts');
  try {
    const search = await within(call(s.app, 'GET', '/contacts?q=person', { token: owner.token }));
    t.equal(search.status, 503);
    t.equal(search.body.error, 'service_unavailable');
    t.match(search.body.message, /^this contact search ran past its 200 ms deadline/);
    t.equal(search.headers['retry-after'], '5');
  } finally {
    await lock.release();
  }
  lock = await holdLock(s.sql, 'analytics_hourly');
  try {
    const rollup = await within(call(s.app, 'GET', '/analytics/rollup', { token: owner.token }));
    t.equal(rollup.status, 503);
    t.match(rollup.body, { error: 'service_unavailable', message: /^this analytics read ran past its 200 ms deadline/ });
    t.equal(rollup.headers['retry-after'], '5');
  } finally {
    await lock.release();
  }
  const search = await call(s.app, 'GET', '/contacts?q=person', { token: owner.token });
  t.same([search.status, search.body.data.total], [200, 5], 'within its deadline the search answers');
  t.equal((await call(s.app, 'GET', '/analytics/rollup', { token: owner.token })).status, 200);
  await assertCleanPool(t, s);
});

t.test("a tenant's heavy queries beyond its cap are 429 while another tenant's still run", async (t) => {
  const s = await buildTestApp(t, { env: { MAILPATH_CONFIG__QUERIES__PER_TENANT: '2', MAILPATH_CONFIG__QUERIES__QUEUE_WAIT_MS: '100' } });
  const a = await registerTenant(s.app);
  const b = await registerTenant(s.app);
  await manyContacts(s.sql, b.tenantId, 3);

  const lock = await holdLock(s.sql, 'analytics_hourly');
  let held: Promise<Awaited<ReturnType<typeof call>>[]>;
  try {
    held = Promise.all([0, 1].map(() => call(s.app, 'GET', '/analytics/rollup', { token: a.token })));
    await lockWaiters(s.sql, 2);
    let settled = false;
    void held.then(() => (settled = true));

    const third = await within(call(s.app, 'GET', '/analytics/rollup', { token: a.token }));
    t.equal(third.status, 429, "A's third heavy query at once is refused");
    t.equal(third.body.error, 'rate_limited');
    t.match(third.body.message, /^this account already runs 2 heavy queries/);
    t.equal(third.headers['retry-after'], '5');
    t.equal((await within(call(s.app, 'GET', '/contacts?q=x', { token: a.token }))).status, 429, 'the cap holds across kinds');

    const other = await within(call(s.app, 'GET', '/contacts?q=example', { token: b.token }));
    t.same([other.status, other.body.data.total], [200, 3], "B's search runs meanwhile");
    t.notOk(settled, "A's two queries are still waiting");
  } finally {
    await lock.release();
  }
  t.same(
    (await held).map((r) => r.status),
    [200, 200],
    'the held queries answer once the lock is gone',
  );
  t.equal((await call(s.app, 'GET', '/analytics/rollup', { token: a.token })).status, 200, "A's slots are free again");
  await assertCleanPool(t, s);
});

t.test('heavy queries of all tenants together are capped per process: beyond it 503 with Retry-After', async (t) => {
  const s = await buildTestApp(t, { env: { MAILPATH_CONFIG__QUERIES__GLOBAL: '1', MAILPATH_CONFIG__QUERIES__QUEUE_WAIT_MS: '100' } });
  const a = await registerTenant(s.app);
  const b = await registerTenant(s.app);
  const lock = await holdLock(s.sql, 'analytics_hourly');
  let held: Promise<Awaited<ReturnType<typeof call>>>;
  try {
    held = call(s.app, 'GET', '/analytics/rollup', { token: a.token });
    await lockWaiters(s.sql, 1);
    const refused = await within(call(s.app, 'GET', '/contacts?q=x', { token: b.token }));
    t.equal(refused.status, 503);
    t.match(refused.body, { error: 'service_unavailable', message: /^the service is running as many heavy queries as it can at once/ });
    t.equal(refused.headers['retry-after'], '5');
  } finally {
    await lock.release();
  }
  t.equal((await held).status, 200);
  t.equal((await call(s.app, 'GET', '/contacts?q=x', { token: b.token })).status, 200, 'the slot is free again');
});

t.test('an export past its deadline answers 503 with Retry-After before any row; a finished one ends its transaction', async (t) => {
  const s = await buildTestApp(t, { env: { MAILPATH_CONFIG__QUERIES__DEADLINES_MS__EXPORT: '200' } });
  const owner = await registerTenant(s.app);
  const lock = await holdLock(s.sql, 'audit_events');
  try {
    const res = await within(call(s.app, 'GET', '/audit-events.csv', { token: owner.token }));
    t.equal(res.status, 503, 'a status of its own, not a 200 cut short');
    t.match(res.body, { error: 'service_unavailable', message: /^this export ran past its 200 ms deadline/ });
    t.equal(res.headers['retry-after'], '5');
    t.notOk(res.headers['content-disposition'], 'no attachment of an error');
  } finally {
    await lock.release();
  }
  const res = await call(s.app, 'GET', '/audit-events.csv', { token: owner.token });
  t.equal(res.status, 200);
  t.match(String(res.body), /^id,time,action/);
  await assertCleanPool(t, s);
});

t.test("a tenant whose heavy queries used their time budget gets 429 until it refills; another tenant's still run", async (t) => {
  // A budget of 300 ms per minute: one analytics read held 400 ms by a lock spends it all.
  const s = await buildTestApp(t, { env: { MAILPATH_CONFIG__QUERIES__PER_TENANT_MS_PER_MINUTE: '300' } });
  const a = await registerTenant(s.app);
  const b = await registerTenant(s.app);
  const lock = await holdLock(s.sql, 'analytics_hourly');
  const held = call(s.app, 'GET', '/analytics/rollup', { token: a.token });
  try {
    await lockWaiters(s.sql, 1);
    await new Promise((r) => setTimeout(r, 400));
  } finally {
    await lock.release();
  }
  t.equal((await held).status, 200, 'the query that spent the budget answers');
  const refused = await within(call(s.app, 'GET', '/contacts?q=x', { token: a.token }));
  t.equal(refused.status, 429, "A's next heavy query of any kind is refused");
  t.match(refused.body, { error: 'rate_limited', message: /used their 300 ms of query time per minute: retry after \d+ s$/ });
  // At least 100 ms over a 300 ms/min budget: 20 s or more to drain below it.
  t.ok(Number(refused.headers['retry-after']) >= 20, `Retry-After says how long the refill takes (${refused.headers['retry-after']} s)`);
  t.equal((await call(s.app, 'GET', '/contacts?q=x', { token: b.token })).status, 200, "B's budget is its own");
});

t.test('a tenant-shaped query runs with its deadline and without parallel workers (one core of the server); the pool keeps neither', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const queries = new TenantQueries(s.sql, loadConfig({}).queries);
  const inside = await queries.run(
    owner.tenantId,
    'segment',
    (tx) => tx<{ workers: string; timeout: string }[]>`
    select current_setting('max_parallel_workers_per_gather') as workers, current_setting('statement_timeout') as timeout`,
  );
  t.same(inside[0], { workers: '0', timeout: '5s' });
  // Every connection of the pool (four at once take all four) is back at the server's defaults.
  const seen = await Promise.all(
    [0, 1, 2, 3].map(
      () => s.sql<{ workers: string; timeout: string }[]>`
    select current_setting('max_parallel_workers_per_gather') as workers, current_setting('statement_timeout') as timeout, pg_sleep(0.05)`,
    ),
  );
  t.same(
    seen.map((r) => [r[0]!.workers, r[0]!.timeout]),
    [
      ['2', '0'],
      ['2', '0'],
      ['2', '0'],
      ['2', '0'],
    ],
    'other queries keep the server defaults',
  );
});
