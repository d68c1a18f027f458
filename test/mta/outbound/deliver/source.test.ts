// IP pools and the watchdog on real deliveries to a loopback sink (which sees each delivery's source address): members in turn, a Spamhaus-style 554
// quarantines the address and defers the send, later deliveries skip it, a pool with every member quarantined sends nothing, release by the admin endpoint
// (audited) and by the cool-down on an injected clock, pools by sending domain and tenant.
import t from 'tap';
import { startOutbound } from '../../../../mta/outbound/deliver/start.js';
import { ManualClock } from '../../../../shared/kernel/clock.js';
import { listAttempts } from '../../../../shared/sending/outbound-log/queries.js';
import { call, registerTenant, superAdminToken } from '../../../helpers/app.js';
import { deliveryFixture, quietSink } from '../../../helpers/delivery-fixture.js';
import { verifiedSendingDomain } from '../../../helpers/sending-domain.js';
import { startSmtpSink } from '../../../helpers/smtp-sink.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const COOLDOWN_MIN = 60;
const SPAMHAUS = (ip: string) => ({
  code: 554,
  text: `5.7.1 Service unavailable; Client host [${ip}] blocked using zen.spamhaus.org; https://www.spamhaus.org/query/ip/${ip}`,
});

const sink = await startSmtpSink(t);
const clock = new ManualClock(new Date());
const fx = await deliveryFixture(t, {
  clock,
  env: {
    MAILPATH_OUTBOUND_RELAY: sink.address,
    // The whole of 127/8 is local on Linux: each pool member is a real source address here.
    MAILPATH_CONFIG__IP_POOLS__POOLS: JSON.stringify({ main: ['127.0.0.2', '127.0.0.3'], other: ['127.0.0.4'] }),
    MAILPATH_CONFIG__IP_POOLS__DEFAULT_POOL: 'main',
    MAILPATH_CONFIG__IP_POOLS__DOMAINS: JSON.stringify({ 'pooled.example': 'other' }),
    MAILPATH_CONFIG__IP_WATCHDOG__COOLDOWN_MINUTES: String(COOLDOWN_MIN),
    // Every pick reads the shared state, so a release through the API is seen by the next delivery (the cache has its own test).
    MAILPATH_CONFIG__IP_WATCHDOG__STATE_CACHE_MS: '0',
  },
});
const { sql, app, sender, recipient, send, settled, events, outbound } = fx;
const admin = await superAdminToken(app);

t.beforeEach(() => quietSink(sink));

/** The source address the sink saw for a recipient's RCPT. */
const sourceOf = (to: string) => sink.rcpts.find((r) => r.to === to)?.remoteAddress;

/** Delivers `n` messages one after the other and returns the source address of each. */
async function deliverInTurn(from: Awaited<ReturnType<typeof sender>>, n: number): Promise<string[]> {
  const seen: string[] = [];
  for (let i = 0; i < n; i++) {
    const { id, to } = await send(from);
    await settled(id, ['delivered']);
    seen.push(sourceOf(to)!);
    const delivered = (await events(id)).find((e) => e.type === 'delivered');
    if (delivered?.detail['source_address'] !== seen[i]) throw new Error(`event says ${String(delivered?.detail['source_address'])}, the sink saw ${seen[i]}`);
  }
  return seen;
}

t.test("deliveries go out from the members of the send's pool in turn, as the sink sees it", async (t) => {
  const from = await sender();
  await outbound(t);
  t.same(await deliverInTurn(from, 4), ['127.0.0.2', '127.0.0.3', '127.0.0.2', '127.0.0.3']);
});

t.test('a Spamhaus-style 554 quarantines the address it came to: the send is deferred, and later deliveries skip the address', async (t) => {
  const from = await sender();
  await outbound(t);
  const to = recipient();
  sink.answerFor(to, SPAMHAUS('127.0.0.2'));
  const { id } = await send(from, { to });
  const row = await settled(id, ['deferred', 'bounced']);
  t.equal(row.status, 'deferred', 'the address was refused, not the recipient: retried later from another address, not bounced');
  const blocked = sourceOf(to)!;
  t.equal(blocked, '127.0.0.2', 'the first member in turn');
  const deferred = (await events(id)).find((e) => e.type === 'deferred');
  t.match(deferred?.detail, { source_address: blocked, smtp_code: 554, reply: /spamhaus/ });

  const [q] = await sql<{ address: string; pool: string; rule: string; quarantined_until: Date }[]>`select * from ip_quarantines`;
  t.match(q, { address: blocked, pool: 'main', rule: 'dnsbl' });
  t.equal(q!.quarantined_until.getTime(), clock.now().getTime() + COOLDOWN_MIN * 60_000, 'for the cool-down, from the injected clock');
  const [event] = await sql`select kind, address, pool, rule, reply, destination, send_id from ip_watchdog_events`;
  t.match(event, {
    kind: 'quarantined',
    address: blocked,
    pool: 'main',
    rule: 'dnsbl',
    reply: /blocked using zen\.spamhaus\.org/,
    destination: '127.0.0.1',
    send_id: id,
  });
  const [audit] = await sql`select actor_type, action, resource_id, metadata from audit_events where action = 'ip_watchdog.quarantine'`;
  t.match(audit, { actor_type: 'system', resource_id: blocked, metadata: { pool: 'main', rule: 'dnsbl', send_id: id } });

  t.same(await deliverInTurn(from, 3), ['127.0.0.3', '127.0.0.3', '127.0.0.3'], 'never from the quarantined address');
});

t.test('with every member of the pool quarantined nothing is sent: the send is deferred, saying why', async (t) => {
  const from = await sender();
  await outbound(t);
  const to = recipient();
  sink.answerFor(to, SPAMHAUS('127.0.0.3'));
  const first = await send(from, { to });
  await settled(first.id, ['deferred']);
  t.equal(sourceOf(to), '127.0.0.3');
  t.equal((await sql`select 1 from ip_quarantines`).length, 2, 'both members of main are quarantined');

  const held = await send(from);
  const row = await settled(held.id, ['deferred']);
  t.match(row.status_detail, /every address of IP pool main is quarantined/);
  t.equal(sourceOf(held.to), undefined, 'no RCPT reached the sink');
  t.match((await listAttempts(sql, held.id))[0], { outcome: 'deferred', remote_host: null, smtp_code: null });
});

t.test('an operator releases an address through the endpoint (audited), and deliveries use it again', async (t) => {
  const tenant = await registerTenant(app);
  t.equal((await call(app, 'POST', '/admin/ip-watchdog/127.0.0.2/release', { token: tenant.token })).status, 403, 'a tenant user may not');
  t.equal((await call(app, 'POST', '/admin/ip-watchdog/127.0.0.9/release', { token: admin })).status, 404, 'not a pool address');
  t.equal((await call(app, 'POST', '/admin/ip-watchdog/not-an-ip/release', { token: admin })).status, 422);

  const res = await call(app, 'POST', '/admin/ip-watchdog/127.0.0.2/release', { token: admin });
  t.equal(res.status, 200);
  t.match(res.body.data, { address: '127.0.0.2', rule: 'dnsbl', released_at: clock.now().toISOString() });
  const [audit] = await sql`select actor_type, actor_id, action, resource_id from audit_events where action = 'ip_watchdog.release'`;
  t.match(audit, { actor_type: 'user', resource_id: '127.0.0.2' });
  t.ok(audit!['actor_id'], 'names the operator');
  const again = await call(app, 'POST', '/admin/ip-watchdog/127.0.0.2/release', { token: admin });
  t.equal(again.status, 409, 'not quarantined any more');

  const from = await sender();
  await outbound(t);
  t.same(await deliverInTurn(from, 2), ['127.0.0.2', '127.0.0.2'], '127.0.0.3 is still quarantined');
});

t.test('the cool-down ends by the clock; the expiry worker records it', async (t) => {
  // The sends the tests above left deferred come due with this hour and, retried between this test's two, would take
  // a turn each (seen once in a loaded run: 127.0.0.2 twice): this test is about its own two deliveries.
  await sql`delete from delivery_queue`;
  clock.advance(COOLDOWN_MIN * 60_000 + 1000);
  const from = await sender();
  await outbound(t);
  t.same((await deliverInTurn(from, 2)).sort(), ['127.0.0.2', '127.0.0.3'], 'both members in use again, before any worker ran');

  const run = await call(app, 'POST', '/admin/workers/ip-quarantine-expiry/run-now', { token: admin });
  t.equal(run.status, 200);
  t.match(run.body.data, { outcome: 'ok', result: { expired: 1 } });
  t.equal((await sql`select 1 from ip_quarantines`).length, 0);
  const [expired] = await sql<{ kind: string; address: string; occurred_at: Date; quarantined_until: Date }[]>`
    select kind, address, occurred_at, quarantined_until from ip_watchdog_events where kind = 'expired'`;
  t.match(expired, { address: '127.0.0.3' });
  t.equal(expired!.occurred_at.getTime(), expired!.quarantined_until.getTime(), 'dated when the cool-down ended');
  t.equal((await sql`select 1 from audit_events where action = 'ip_watchdog.expire' and resource_id = '127.0.0.3'`).length, 1);
});

t.test('GET /admin/ip-watchdog: one row per pool member with its state and latest event, the events newest first', async (t) => {
  const res = await call(app, 'GET', '/admin/ip-watchdog', { token: admin });
  t.equal(res.status, 200);
  const { pools, events: recent } = res.body.data;
  t.same(
    pools.map((p: { pool: string; address: string; quarantined: boolean }) => [p.pool, p.address, p.quarantined]),
    [
      ['main', '127.0.0.2', false],
      ['main', '127.0.0.3', false],
      ['other', '127.0.0.4', false],
    ],
  );
  t.match(pools[0].latest_event, { kind: 'released', address: '127.0.0.2', actor_id: String });
  t.match(pools[1].latest_event, { kind: 'expired', address: '127.0.0.3', rule: 'dnsbl' });
  t.equal(pools[2].latest_event, null);
  t.same(
    recent.map((e: { kind: string; address: string }) => `${e.kind} ${e.address}`),
    ['expired 127.0.0.3', 'released 127.0.0.2', 'quarantined 127.0.0.3', 'quarantined 127.0.0.2'],
  );
  t.match(recent[3], { pool: 'main', reply: /spamhaus/, destination: '127.0.0.1', send_id: String, quarantined_until: String });

  // A quarantine in force shows on its member.
  const to = recipient();
  const from = await sender();
  await outbound(t);
  sink.answerFor(to, { code: 550, text: '5.7.606 Access denied, banned sending IP [127.0.0.2]' });
  const { id } = await send(from, { to });
  await settled(id, ['deferred']);
  const now = (await call(app, 'GET', '/admin/ip-watchdog', { token: admin })).body.data;
  const blocked = now.pools.find((p: { address: string }) => p.address === sourceOf(to));
  t.match(blocked, { quarantined: true, rule: 'microsoft-banned-ip', quarantined_until: String, latest_event: { kind: 'quarantined' } });
  t.equal(now.events[0].kind, 'quarantined');

  const tenant = await registerTenant(app);
  t.equal((await call(app, 'GET', '/admin/ip-watchdog', { token: tenant.token })).status, 403, 'super-admin only');
  t.equal((await call(app, 'GET', '/admin/ip-watchdog')).status, 401);
});

t.test('a sending domain or a tenant assigned to a pool sends from that pool', async (t) => {
  const tenantId = await insertTenant(sql);
  const domain = await verifiedSendingDomain(sql, fx.ctx.vault, tenantId, 'pooled.example');
  const byDomain = { tenant: { id: tenantId, status: 'active' as const, is_sandbox: false }, domain };
  const byTenant = await sender();
  const running = await startOutbound({
    ...fx.deps,
    config: { ...fx.deps.config, ipPools: { ...fx.deps.config.ipPools, tenants: { [byTenant.tenant.id]: 'other' } } },
  });
  t.teardown(() => running.stop());
  t.same(await deliverInTurn(byDomain, 2), ['127.0.0.4', '127.0.0.4'], 'pooled.example is in pool other');
  t.same(await deliverInTurn(byTenant, 1), ['127.0.0.4'], 'the tenant is in pool other');
});
