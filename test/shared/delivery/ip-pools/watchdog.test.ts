// The per-process IpWatchdog: quarantines made by another process are read from PostgreSQL at most once per state_cache_ms (the hot path does not query per
// delivery), its own are seen at once, and a pool with every member quarantined yields the earliest release.
import t from 'tap';
import { ManualClock } from '../../../../shared/kernel/clock.js';
import { loadConfig } from '../../../../shared/config/index.js';
import { connect } from '../../../../shared/db/connection.js';
import { quarantineAddress, releaseAddress } from '../../../../shared/delivery/ip-pools/queries.js';
import { IpWatchdog } from '../../../../shared/delivery/ip-pools/watchdog.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { createTestDatabase } from '../../../helpers/db.js';

const db = await createTestDatabase();
const log = createLogger('silent');
const sql = connect(db.url, log, { max: 2 });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});

const configWith = (cacheMs: number) =>
  loadConfig({
    MAILPATH_CONFIG__IP_POOLS__POOLS: JSON.stringify({ main: ['192.0.2.1', '192.0.2.2'] }),
    MAILPATH_CONFIG__IP_POOLS__DEFAULT_POOL: 'main',
    MAILPATH_CONFIG__IP_WATCHDOG__STATE_CACHE_MS: String(cacheMs),
  });
const send = { tenantId: '00000000-0000-4000-8000-000000000001', domainId: null };
const clock = new ManualClock(new Date('2030-01-01T12:00:00Z'));
const block = { code: 554, text: '554 5.7.1 blocked using zen.spamhaus.org', enhanced: '5.7.1' };

/** A quarantine written the way another outbound process would write it. */
const elsewhere = (address: string, minutes = 60) =>
  quarantineAddress(sql, {
    address,
    pool: 'main',
    rule: 'dnsbl',
    reply: block.text,
    destination: null,
    sendId: null,
    at: clock.now(),
    until: new Date(clock.now().getTime() + minutes * 60_000),
  });

t.afterEach(async () => {
  await sql`delete from ip_quarantines`;
});

t.test("with a long cache, another process's quarantine is not read again per pick", async (t) => {
  const watchdog = new IpWatchdog({ sql, config: configWith(600_000), clock, log });
  t.match(await watchdog.pick(send), { kind: 'address', address: '192.0.2.1' }, 'first pick reads the (empty) state');
  await elsewhere('192.0.2.2');
  t.match(await watchdog.pick(send), { kind: 'address', address: '192.0.2.2' }, 'the cached state does not know yet: no query per delivery');
});

t.test('with no cache every pick reads the shared state', async (t) => {
  const watchdog = new IpWatchdog({ sql, config: configWith(0), clock, log });
  await elsewhere('192.0.2.1');
  for (let i = 0; i < 3; i++) t.match(await watchdog.pick(send), { kind: 'address', address: '192.0.2.2' });
  await releaseAddress(sql, '192.0.2.1', clock.now(), { type: 'user', id: 'u1' });
  const picks = [await watchdog.pick(send), await watchdog.pick(send)].map((p) => (p.kind === 'address' ? p.address : p.kind));
  t.same(picks.sort(), ['192.0.2.1', '192.0.2.2'], 'released: in turn again');
});

t.test('its own quarantine is seen at once, whatever the cache time', async (t) => {
  const watchdog = new IpWatchdog({ sql, config: configWith(600_000), clock, log });
  await watchdog.pick(send);
  t.equal(await watchdog.observe({ pool: 'main', address: '192.0.2.1' }, block, { destination: 'mx.example [198.51.100.1]', sendId: null }), 'dnsbl');
  for (let i = 0; i < 3; i++) t.match(await watchdog.pick(send), { kind: 'address', address: '192.0.2.2' });
  t.equal(
    await watchdog.observe({ pool: 'main', address: '192.0.2.1' }, { code: 250, text: '250 OK', enhanced: null }, { destination: null, sendId: null }),
    null,
    'an acceptance is no block',
  );
});

t.test('every member quarantined: nothing to pick, and when the first comes back', async (t) => {
  const watchdog = new IpWatchdog({ sql, config: configWith(0), clock, log });
  await elsewhere('192.0.2.1', 30);
  await elsewhere('192.0.2.2', 90);
  t.same(await watchdog.pick(send), { kind: 'quarantined', pool: 'main', until: new Date(clock.now().getTime() + 30 * 60_000) });
  clock.advance(30 * 60_000);
  t.match(await watchdog.pick(send), { kind: 'address', address: '192.0.2.1' }, 'the cool-down ends on the clock');
  t.same(await new IpWatchdog({ sql, config: loadConfig({}), clock, log }).pick(send), { kind: 'any' }, 'no pools: the system picks');
});

t.test('a block while quarantined does not restart the cool-down or add an event', async (t) => {
  const first = await elsewhere('192.0.2.1', 60);
  t.ok(first);
  clock.advance(10 * 60_000);
  t.equal(await elsewhere('192.0.2.1', 60), undefined);
  const [row] = await sql<{ quarantined_until: Date }[]>`select quarantined_until from ip_quarantines where address = '192.0.2.1'`;
  t.same(row!.quarantined_until, first!.quarantined_until);
  clock.advance(60 * 60_000);
  t.ok(await elsewhere('192.0.2.1', 60), 'after the cool-down a block quarantines again');
  const kinds = await sql<{ kind: string }[]>`select kind from ip_watchdog_events where address = '192.0.2.1' order by id desc limit 2`;
  t.same(
    kinds.map((k) => k.kind),
    ['quarantined', 'expired'],
    'the run-out quarantine is recorded as expired first',
  );
});
