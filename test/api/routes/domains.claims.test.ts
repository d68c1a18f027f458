// Domain claims through the API against real loopback DNS: several tenants may claim a name, the one that publishes its own DKIM record owns it, nobody
// learns of the others, unproven claims expire.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { createSendLookups } from '../../../shared/sending/lookups.js';
import { buildTestApp, call, countRows, createKey, registerTenant, superAdminToken, type TestApp, type TestLike, type TestTenant } from '../../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../../helpers/dns-server.js';
import { publishRecords, recordOf } from '../../helpers/domains.js';
import { assertForeign404 } from '../../helpers/isolation.js';

interface Setup extends TestApp {
  dns: TestDnsServer;
  clock: ManualClock;
}

const START = new Date('2026-11-21T10:00:00Z');
const DAY = 86_400_000;

async function setup(t: TestLike, env: Record<string, string> = {}): Promise<Setup> {
  const dns = await startDnsServer(t);
  const clock = new ManualClock(START);
  const built = await buildTestApp(t, {
    clock,
    env: {
      MAILPATH_DNS_SERVERS: dns.address,
      MAILPATH_HOSTNAME: 'mx.mailpath.test',
      MAILPATH_CONFIG__DNS__TIMEOUT_MS: '150',
      MAILPATH_CONFIG__DNS__TRIES: '1',
      ...env,
    },
  });
  return { ...built, dns, clock };
}

async function claim(s: Setup, token: string, name: string) {
  const res = await call(s.app, 'POST', '/domains', { token, body: { name } });
  if (res.status !== 201) throw new Error(`add domain: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

const verify = async (s: Setup, token: string, id: string) => (await call(s.app, 'POST', `/domains/${id}/verify`, { token })).body.data;
const read = async (s: Setup, token: string, id: string) => (await call(s.app, 'GET', `/domains/${id}`, { token })).body.data;
const sendingNames = async (s: Setup, tenant: TestTenant) => (await createSendLookups(s.sql, s.ctx.log).sendingDomains(tenant.tenantId)).map((d) => d.name);
const auditOf = (s: Setup, action: string, id: string) =>
  s.sql<
    { tenant_id: string; metadata: Record<string, unknown> }[]
  >`select tenant_id, metadata from audit_events where action = ${action} and resource_id = ${id}`;

/** The parts of a claim's answer that could tell one claim from another, ids and keys aside. */
const visible = (d: Record<string, unknown>) => ({
  status: d['status'],
  can_send: d['can_send'],
  owned_at: d['owned_at'],
  superseded_at: d['superseded_at'],
  claim_reason: d['claim_reason'],
  expires_in: Date.parse(d['expires_at'] as string) - Date.parse(d['created_at'] as string),
  records: (d['records'] as { kind: string; verified: boolean; error: string | null }[]).map((r) => [r.kind, r.verified, r.error]),
});

t.test(
  'several tenants claim one name: each gets 201 and its own key, and none learns of the others (case and full-width variants are the same name)',
  async (t) => {
    const s = await setup(t);
    const [a, b, c] = [await registerTenant(s.app), await registerTenant(s.app), await registerTenant(s.app)];
    const fresh = await claim(s, c.token, 'never-claimed.example');
    const first = await claim(s, a.token, 'claimed.example');
    const second = await claim(s, b.token, 'CLAIMED.Example.');
    const third = await claim(s, c.token, 'ｃｌａｉｍｅｄ．ＥＸＡＭＰＬＥ');
    for (const d of [first, second, third]) t.equal(d.name, 'claimed.example', 'one A-label name');
    t.same(visible(second), visible(fresh), 'a claim of a name others claimed reads exactly like a claim of a name nobody claimed');
    t.same(visible(third), visible(first));
    t.match(first, {
      status: 'pending',
      can_send: false,
      owned_at: null,
      superseded_at: null,
      claim_reason: /^Pending: publishing this claim's DKIM record proves/,
    });
    t.equal(Date.parse(first.expires_at), START.getTime() + 7 * DAY, 'expires claim_expiry_days (7) after it was added');
    const keys = [first, second, third].map((d) => recordOf(d.records, 'dkim').value);
    t.equal(new Set(keys).size, 3, 'each claim has its own DKIM key, so its own DKIM record');
    t.equal(new Set([first, second, third].map((d) => recordOf(d.records, 'dkim').host)).size, 3, 'at its own selector');
    t.same(
      [first, second, third].map((d) => recordOf(d.records, 'spf').value),
      Array(3).fill('v=spf1 include:spf.mx.mailpath.test ~all'),
      'SPF is the same for all: no proof',
    );
    const text = JSON.stringify([second, third]);
    for (const other of [first.id, a.tenantId, a.slug]) t.notOk(text.includes(other), 'nothing of the first claimant in the later answers');

    for (const variant of ['claimed.example', 'Claimed.EXAMPLE', 'ｃｌａｉｍｅｄ．ｅｘａｍｐｌｅ', 'claimed。example']) {
      const again = await call(s.app, 'POST', '/domains', { token: a.token, body: { name: variant } });
      t.equal(again.status, 409, `${variant}: the same tenant twice`);
      t.match(again.body, { error: 'conflict', message: /claimed\.example is already a domain of this account/ });
    }
    t.equal(await countRows(s.sql, 'domains'), 4, 'no claim was written by the refused requests');
    t.equal((await call(s.app, 'GET', '/domains', { token: b.token })).body.total, 1, 'each tenant lists its own claim only');
  },
);

t.test(
  'the claim whose own DKIM record is published wins; the others are superseded, say so without naming the winner, and can no longer verify',
  async (t) => {
    const s = await setup(t);
    const [squatter, owner] = [await registerTenant(s.app), await registerTenant(s.app)];
    const squat = await claim(s, squatter.token, 'brand.example');
    const real = await claim(s, owner.token, 'brand.example');

    // Only the name's DNS controller (the owner) publishes: its own records, which include SPF, DMARC and MX that match the squatter's too.
    publishRecords(s.dns, real.records);
    const squatFirst = await verify(s, squatter.token, squat.id);
    t.match(squatFirst, { status: 'pending', can_send: false, owned_at: null }, 'the squatter checking first gains nothing');
    t.same(
      ['spf', 'dmarc', 'mx'].map((k) => recordOf(squatFirst.records, k as 'spf').verified),
      [true, true, true],
      'its SPF, DMARC and MX "verify": they prove nothing',
    );
    t.match(
      recordOf(squatFirst.records, 'dkim'),
      { verified: false, error: /^no DKIM record at mp\d{8}-[0-9a-f]{8}\._domainkey\.brand\.example/ },
      'its own DKIM record is what nobody published',
    );

    const won = await verify(s, owner.token, real.id);
    t.match(won, { status: 'verified', can_send: true, owned_at: String, expires_at: null, superseded_at: null, claim_reason: null });
    t.same(await sendingNames(s, owner), ['brand.example']);

    const lost = await read(s, squatter.token, squat.id);
    t.match(lost, {
      status: 'superseded',
      can_send: false,
      owned_at: null,
      superseded_at: String,
      expires_at: squat.expires_at,
      claim_reason: /^Another account proved control of this name first/,
    });
    const text = JSON.stringify(lost);
    for (const other of [real.id, owner.tenantId, owner.slug, owner.email, recordOf(real.records, 'dkim').value])
      t.notOk(text.includes(other), 'the winner is not named');
    t.same(await sendingNames(s, squatter), []);

    // Even were its own records published now, a superseded claim is closed: no look-up, no verification.
    publishRecords(s.dns, squat.records, ['dkim']);
    const before = s.dns.queries();
    const closed = await verify(s, squatter.token, squat.id);
    t.match(closed, { status: 'superseded', can_send: false, owned_at: null });
    t.equal(s.dns.queries(), before, 'a closed claim is not looked up');
    t.equal((await call(s.app, 'POST', `/domains/${squat.id}/dkim/rotate`, { token: squatter.token, body: {} })).status, 409, 'nor can it rotate its key');

    t.same(
      (await auditOf(s, 'domain.owned', real.id)).map((r) => [r.tenant_id, r.metadata]),
      [[owner.tenantId, { domain: 'brand.example' }]],
    );
    t.same(
      (await auditOf(s, 'domain.superseded', squat.id)).map((r) => [r.tenant_id, r.metadata]),
      [[squatter.tenantId, { domain: 'brand.example' }]],
      "the loser's audit names no one",
    );

    const admin = await superAdminToken(s.app);
    const run = await call(s.app, 'POST', '/admin/workers/domain-recheck/run-now', { token: admin });
    t.match(run.body.data.result, { checked: 1, verified: 1 }, 'the re-check skips closed claims');

    t.equal((await call(s.app, 'DELETE', `/domains/${squat.id}`, { token: squatter.token })).status, 200, 'the loser may delete its claim');
    const reclaim = await claim(s, squatter.token, 'brand.example');
    t.match(await verify(s, squatter.token, reclaim.id), { status: 'pending', can_send: false, owned_at: null }, 'claiming again takes nothing over');
    t.same(await sendingNames(s, squatter), []);
  },
);

t.test('a later claim of an owned name cannot take it over, not even while the owner drifts; it may win once the owner deletes the domain', async (t) => {
  const s = await setup(t);
  const [owner, later] = [await registerTenant(s.app), await registerTenant(s.app)];
  const admin = await superAdminToken(s.app);
  const owned = await claim(s, owner.token, 'owned.example');
  publishRecords(s.dns, owned.records);
  t.equal((await verify(s, owner.token, owned.id)).can_send, true);

  const fresh = await claim(s, later.token, 'fresh-name.example');
  const late = await claim(s, later.token, 'OWNED.example');
  t.same(visible(late), visible(fresh), 'a claim of an owned name reads like any new claim: ownership is not revealed');
  t.match(await verify(s, later.token, late.id), { status: 'pending', can_send: false, owned_at: null, claim_reason: /^Pending/ });

  // The name's DNS controller publishes this claim's DKIM record too (say both accounts are its own): control is proved, but the name is taken.
  publishRecords(s.dns, [recordOf(late.records, 'dkim')]);
  const blocked = await verify(s, later.token, late.id);
  t.match(blocked, { status: 'pending', can_send: false, owned_at: null, claim_reason: /owned by another account/ }, 'told so only once it proved control');
  t.equal(recordOf(blocked.records, 'dkim').verified, true);
  t.same(await sendingNames(s, later), []);

  s.dns.remove('owned.example', 'TXT');
  await call(s.app, 'POST', '/admin/workers/domain-recheck/run-now', { token: admin });
  t.match(await read(s, owner.token, owned.id), { status: 'drifted', can_send: false, owned_at: String }, 'a drifted owner keeps the name');
  t.match(await verify(s, later.token, late.id), { owned_at: null, can_send: false }, 'drift does not release the name');

  publishRecords(s.dns, owned.records, ['spf']);
  t.equal((await call(s.app, 'DELETE', `/domains/${owned.id}`, { token: owner.token })).status, 200);
  const taken = await verify(s, later.token, late.id);
  t.match(taken, { status: 'verified', can_send: true, owned_at: String, expires_at: null, claim_reason: null }, 'the name was free: the proven claim owns it');
  t.same(await sendingNames(s, later), ['owned.example']);
  t.equal((await auditOf(s, 'domain.owned', late.id)).length, 1);
});

t.test('claims that do not prove control expire; superseded ones too; owned ones never', async (t) => {
  const s = await setup(t, { MAILPATH_CONFIG__DNS__CLAIM_EXPIRY_DAYS: '3' });
  const [a, b, c] = [await registerTenant(s.app), await registerTenant(s.app), await registerTenant(s.app)];
  // API keys: sessions end after 12 hours of the test clock.
  const [ka, kb, kc] = [(await createKey(s.app, a)).key, (await createKey(s.app, b)).key, (await createKey(s.app, c)).key];
  const stale = await claim(s, ka, 'stale.example');
  t.equal(Date.parse(stale.expires_at), START.getTime() + 3 * DAY, 'dns.claim_expiry_days');
  s.clock.advance(DAY);
  const loser = await claim(s, kb, 'won.example');
  const winner = await claim(s, kc, 'won.example');
  publishRecords(s.dns, winner.records);
  t.equal((await verify(s, kc, winner.id)).status, 'verified');
  t.equal((await read(s, kb, loser.id)).status, 'superseded');

  const recheck = async () => (await call(s.app, 'POST', '/admin/workers/domain-recheck/run-now', { token: await superAdminToken(s.app) })).body.data.result;
  s.clock.set(new Date(START.getTime() + 3 * DAY - 1));
  t.match(await recheck(), { expired: 0 }, 'not a millisecond early');
  t.equal(await countRows(s.sql, 'domains'), 3);

  s.clock.set(new Date(START.getTime() + 3 * DAY));
  t.match(await recheck(), { expired: 1, checked: 1 }, 'the stale claim goes; the owned one is still checked');
  t.equal((await call(s.app, 'GET', `/domains/${stale.id}`, { token: ka })).status, 404, 'removed');
  t.equal(await countRows(s.sql, 'dkim_keys', a.tenantId), 0, 'with its key');
  const [expired] = await auditOf(s, 'domain.expired', stale.id);
  t.match(expired, { tenant_id: a.tenantId, metadata: { domain: 'stale.example', superseded: false } }, "the expiry is audited in the claimant's tenant");
  t.equal((await read(s, kb, loser.id)).status, 'superseded', 'shown until its own expiry');

  s.clock.set(new Date(START.getTime() + 4 * DAY));
  t.match(await recheck(), { expired: 1 });
  t.equal((await call(s.app, 'GET', `/domains/${loser.id}`, { token: kb })).status, 404);
  t.match((await auditOf(s, 'domain.expired', loser.id))[0], { tenant_id: b.tenantId, metadata: { domain: 'won.example', superseded: true } });

  s.clock.advance(365 * DAY);
  t.match(await recheck(), { expired: 0, checked: 1, verified: 1 });
  t.equal((await read(s, kc, winner.id)).status, 'verified', 'an owned domain never expires');
});

t.test('every domain route is 404 across tenants, also between claims of the same name; a claim that does not own its name cannot rotate', async (t) => {
  const s = await setup(t);
  const [a, b] = [await registerTenant(s.app), await registerTenant(s.app)];
  const mine = await claim(s, a.token, 'same.example');
  const theirs = await claim(s, b.token, 'same.example');
  t.equal((await call(s.app, 'POST', `/domains/${mine.id}/dkim/rotate`, { token: a.token, body: {} })).status, 409, 'pending: its key is its proof');
  publishRecords(s.dns, mine.records);
  t.equal((await verify(s, a.token, mine.id)).status, 'verified');
  const rotation = await call(s.app, 'POST', `/domains/${mine.id}/dkim/rotate`, { token: a.token, body: {} });
  t.equal(rotation.status, 202, 'the owner rotates');
  const requests = (id: string, rotationId: string) => [
    { method: 'GET' as const, url: `/domains/${id}` },
    { method: 'POST' as const, url: `/domains/${id}/verify` },
    { method: 'POST' as const, url: `/domains/${id}/dkim/rotate`, body: {} },
    { method: 'GET' as const, url: `/domains/${id}/dkim/rotations` },
    { method: 'GET' as const, url: `/domains/${id}/dkim/rotations/${rotationId}` },
    { method: 'DELETE' as const, url: `/domains/${id}` },
  ];
  await assertForeign404(t, s.app, b.token, requests(mine.id, rotation.body.data.id));
  await assertForeign404(t, s.app, (await createKey(s.app, b)).key, requests(mine.id, rotation.body.data.id));
  await assertForeign404(t, s.app, a.token, requests(theirs.id, rotation.body.data.id));
  t.equal((await read(s, b.token, theirs.id)).status, 'superseded', 'still there for its tenant');
  t.equal((await read(s, a.token, mine.id)).status, 'verified');
  t.equal(await countRows(s.sql, 'dkim_rotations'), 1);
});
