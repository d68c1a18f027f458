// DKIM rotation end to end: three separate public resolvers on loopback, the rotator tick, operator confirm, rollback, audit, auto-rotation.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, countRows, registerTenant, superAdminToken, type TestApp, type TestLike, type TestTenant } from '../../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../../helpers/dns-server.js';
import { publishRecords, recordOf, splitTxt } from '../../helpers/domains.js';

interface Setup extends TestApp {
  dns: TestDnsServer;
  resolvers: TestDnsServer[];
  clock: ManualClock;
  admin: string;
  owner: TestTenant;
}

async function setup(t: TestLike, env: Record<string, string> = {}): Promise<Setup> {
  const dns = await startDnsServer(t);
  const resolvers = [await startDnsServer(t), await startDnsServer(t), await startDnsServer(t)];
  const clock = new ManualClock(new Date('2026-11-21T22:00:00Z'));
  const built = await buildTestApp(t, {
    clock,
    env: {
      MAILPATH_DNS_SERVERS: dns.address,
      MAILPATH_PUBLIC_RESOLVERS: resolvers.map((r) => r.address).join(','),
      MAILPATH_HOSTNAME: 'mx.mailpath.test',
      // Long enough for the loopback servers of a busy test process to answer, short for the resolver that never does.
      MAILPATH_CONFIG__DNS__TIMEOUT_MS: '1000',
      MAILPATH_CONFIG__DNS__TRIES: '1',
      MAILPATH_CONFIG__DKIM__RETIRING_GRACE_HOURS: '2',
      ...env,
    },
  });
  return { ...built, dns, resolvers, clock, admin: await superAdminToken(built.app), owner: await registerTenant(built.app) };
}

/** A verified domain whose records are live on the verification DNS and on every public resolver. */
async function verifiedDomain(s: Setup, name: string, token = s.owner.token) {
  const res = await call(s.app, 'POST', '/domains', { token, body: { name } });
  const d = res.body.data;
  for (const server of [s.dns, ...s.resolvers]) publishRecords(server, d.records);
  const verified = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token });
  if (!verified.body.data.can_send) throw new Error('domain did not verify');
  return d;
}

const tick = (s: Setup) => call(s.app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: s.admin });
const rotationOf = async (s: Setup, id: string) => (await s.sql<{ state: string }[]>`select state from dkim_rotations where id = ${id}`)[0]!.state;
const keyStates = async (s: Setup, domainId: string) =>
  Object.fromEntries(
    (await s.sql<{ selector: string; state: string }[]>`select selector, state from dkim_keys where domain_id = ${domainId}`).map((k) => [k.selector, k.state]),
  );

t.test('a rotation goes live only when all three public resolvers return the new key, then the old key retires after its grace', async (t) => {
  const s = await setup(t);
  const d = await verifiedDomain(s, 'rotate.example');
  const oldSelector = d.dkim.selector;
  s.clock.advance(3 * 3_600_000);

  const started = await call(s.app, 'POST', `/domains/${d.id}/dkim/rotate`, { token: s.owner.token, body: { reason: 'yearly rotation' } });
  t.equal(started.status, 202);
  const r = started.body.data;
  t.match(r, {
    state: 'publishing',
    reason: 'yearly rotation',
    initiated_by: 'tenant',
    old_selector: oldSelector,
    dns_provider_managed: false,
    dns_publish_status: 'awaiting_publication',
    dns_published_at: null,
  });
  t.match(r.new_selector, /^mp20261122$/, 'dated selector of the rotation day');
  t.match(r.dns_record, { type: 'TXT', host: `${r.new_selector}._domainkey.rotate.example`, value: /^v=DKIM1; k=rsa; p=/ });
  t.notMatch(JSON.stringify(started.body), /PRIVATE KEY/);

  let domain = (await call(s.app, 'GET', `/domains/${d.id}`, { token: s.owner.token })).body.data;
  t.equal(domain.dkim.selector, oldSelector, 'the old key keeps signing while publishing');
  t.equal(domain.dkim.rotation.id, r.id, 'the domain shows its rotation in flight');
  t.same(await keyStates(s, d.id), { [oldSelector]: 'active', [r.new_selector]: 'pending' });

  const again = await call(s.app, 'POST', `/domains/${d.id}/dkim/rotate`, { token: s.owner.token, body: {} });
  t.equal(again.status, 409, 'one rotation in flight per domain');
  t.equal(again.body.error, 'conflict');

  // Nothing published yet: every resolver misses it.
  let run = await tick(s);
  t.match(run.body.data.result, { checked: 1, activated: 0, waiting: 1 });
  let current = (await call(s.app, 'GET', `/domains/${d.id}/dkim/rotations/${r.id}`, { token: s.owner.token })).body.data;
  t.equal(current.state, 'publishing');
  t.match(current.error, /^0 of 3 public resolvers return the new record/);

  // Published as two strings on two of the three resolvers.
  s.resolvers[0]!.setTxt(r.dns_record.host, [splitTxt(r.dns_record.value)]);
  s.resolvers[1]!.setTxt(r.dns_record.host, [splitTxt(r.dns_record.value)]);
  run = await tick(s);
  t.match(run.body.data.result, { activated: 0, waiting: 1 });
  current = (await call(s.app, 'GET', `/domains/${d.id}/dkim/rotations/${r.id}`, { token: s.owner.token })).body.data;
  t.equal(current.state, 'publishing', 'two of three is not enough');
  t.match(current.error, new RegExp(`^2 of 3 public resolvers return the new record; ${s.resolvers[2]!.address.replace(/\./g, '\\.')}: no DKIM record`));
  t.same(
    current.resolver_results.map((x: { published: boolean }) => x.published),
    [true, true, false],
  );
  t.equal((await call(s.app, 'GET', `/domains/${d.id}`, { token: s.owner.token })).body.data.dkim.selector, oldSelector);

  // The operator confirms: stamped, error cleared, still publishing.
  const confirm = await call(s.app, 'POST', `/admin/dkim-rotations/${r.id}/confirm-published`, { token: s.admin });
  t.equal(confirm.status, 200);
  t.match(confirm.body.data, { id: r.id, state: 'publishing', dns_published_at: '2026-11-22T01:00:00.000Z', error: null });
  t.equal(await rotationOf(s, r.id), 'publishing', 'confirming does not bypass the propagation check');
  run = await tick(s);
  t.equal(await rotationOf(s, r.id), 'publishing', 'still waiting on the third resolver');

  s.resolvers[2]!.setTxt(r.dns_record.host, [r.dns_record.value]);
  run = await tick(s);
  t.match(run.body.data.result, { activated: 1 });
  current = (await call(s.app, 'GET', `/domains/${d.id}/dkim/rotations/${r.id}`, { token: s.owner.token })).body.data;
  t.match(current, {
    state: 'active',
    activated_at: '2026-11-22T01:00:00.000Z',
    retire_after: '2026-11-22T03:00:00.000Z',
    error: null,
    dns_publish_status: 'propagated',
  });
  t.notOk(current.dns_record, 'no record to publish once active');
  domain = (await call(s.app, 'GET', `/domains/${d.id}`, { token: s.owner.token })).body.data;
  t.equal(domain.dkim.selector, r.new_selector, 'the new key is the live signer');
  t.match(recordOf(domain.records, 'dkim'), { host: r.dns_record.host, value: r.dns_record.value, verified: true });
  t.equal(domain.can_send, true);
  t.same(await keyStates(s, d.id), { [oldSelector]: 'retiring', [r.new_selector]: 'active' });

  run = await tick(s);
  t.same(await keyStates(s, d.id), { [oldSelector]: 'retiring', [r.new_selector]: 'active' }, 'the old key stays through its grace');
  s.clock.advance(2 * 3_600_000);
  run = await tick(s);
  t.match(run.body.data.result, { retired: 1 });
  t.equal(await rotationOf(s, r.id), 'retired');
  t.same(await keyStates(s, d.id), { [oldSelector]: 'retired', [r.new_selector]: 'active' });
  domain = (await call(s.app, 'GET', `/domains/${d.id}`, { token: s.owner.token })).body.data;
  t.equal(domain.dkim.rotation, null, 'nothing in flight');

  const conflictConfirm = await call(s.app, 'POST', `/admin/dkim-rotations/${r.id}/confirm-published`, { token: s.admin });
  t.equal(conflictConfirm.status, 409, 'confirm on a retired rotation');
  t.equal((await call(s.app, 'POST', `/admin/dkim-rotations/${r.id}/rollback`, { token: s.admin })).status, 409, 'rollback on a retired rotation');

  // Every transition is in the audit, with selectors, reason and DNS-publish status.
  const audit = await call(s.app, 'GET', `/admin/dkim/rotations?domain_id=${d.id}`, { token: s.admin });
  t.equal(audit.status, 200);
  t.same(audit.body.data.items.map((i: { action: string }) => i.action).reverse(), [
    'dkim.rotation.pending',
    'dkim.rotation.publishing',
    'dkim.rotation.confirm_published',
    'dkim.rotation.active',
    'dkim.rotation.retired',
  ]);
  for (const item of audit.body.data.items) {
    t.match(item, {
      rotation_id: r.id,
      tenant_id: s.owner.tenantId,
      domain: 'rotate.example',
      old_selector: oldSelector,
      new_selector: r.new_selector,
      reason: 'yearly rotation',
    });
  }
  t.match(audit.body.data.items.map((i: { dns_publish_status: string }) => i.dns_publish_status).reverse(), [
    'awaiting_publication',
    'awaiting_publication',
    'confirmed_published',
    'propagated',
    'propagated',
  ]);
  t.same(audit.body.data.items.map((i: { from_state: string | null; to_state: string }) => [i.from_state, i.to_state]).reverse(), [
    [null, 'pending'],
    ['pending', 'publishing'],
    ['publishing', 'publishing'],
    ['publishing', 'active'],
    ['active', 'retired'],
  ]);
  t.match(
    audit.body.data.items.find((i: { action: string }) => i.action === 'dkim.rotation.confirm_published'),
    { actor_type: 'user' },
  );
  t.match(
    audit.body.data.items.find((i: { action: string }) => i.action === 'dkim.rotation.active'),
    { actor_type: 'system', actor_id: 'dkim-rotator' },
  );

  const after = await call(s.app, 'POST', `/domains/${d.id}/dkim/rotate`, { token: s.owner.token, body: {} });
  t.equal(after.status, 202, 'a new rotation once the last one is retired');
  t.equal(after.body.data.old_selector, r.new_selector);
  t.equal(after.body.data.new_selector, `${r.new_selector.slice(0, 10)}-2`, 'a second key on the same day gets a suffix');
});

t.test('rollback mid-flight: the rotation retires, never activated, and the old key keeps signing', async (t) => {
  const s = await setup(t);
  const d = await verifiedDomain(s, 'rollback.example');
  const r = (await call(s.app, 'POST', `/domains/${d.id}/dkim/rotate`, { token: s.owner.token, body: {} })).body.data;
  for (const server of s.resolvers.slice(0, 2)) server.setTxt(r.dns_record.host, [r.dns_record.value]);
  await tick(s);
  const res = await call(s.app, 'POST', `/admin/dkim-rotations/${r.id}/rollback`, { token: s.admin });
  t.equal(res.status, 200);
  t.match(res.body.data, { id: r.id, state: 'retired' });
  s.resolvers[2]!.setTxt(r.dns_record.host, [r.dns_record.value]);
  await tick(s);
  t.equal(await rotationOf(s, r.id), 'retired', 'a rolled-back rotation never activates');
  t.same(await keyStates(s, d.id), { [d.dkim.selector]: 'active', [r.new_selector]: 'retired' });
  const domain = (await call(s.app, 'GET', `/domains/${d.id}`, { token: s.owner.token })).body.data;
  t.equal(domain.dkim.selector, d.dkim.selector);
  t.equal(domain.can_send, true);
  const view = (await call(s.app, 'GET', `/domains/${d.id}/dkim/rotations/${r.id}`, { token: s.owner.token })).body.data;
  t.match(view, { state: 'retired', activated_at: null, rolled_back_at: String });
  const [audit] = await s.sql<{ metadata: { from_state: string; reverted_to_old_key: boolean } }[]>`
    select metadata from audit_events where action = 'dkim.rotation.rolled_back' and resource_id = ${r.id}`;
  t.match(audit!.metadata, { from_state: 'publishing', reverted_to_old_key: false });
  t.equal((await call(s.app, 'POST', `/admin/dkim-rotations/${r.id}/rollback`, { token: s.admin })).status, 409, 'twice');
  t.equal((await call(s.app, 'POST', `/domains/${d.id}/dkim/rotate`, { token: s.owner.token, body: {} })).status, 202, 'can rotate again');
});

t.test('rollback after activation puts the old key (still published) back as signer', async (t) => {
  const s = await setup(t);
  const d = await verifiedDomain(s, 'revert.example');
  const r = (await call(s.app, 'POST', `/domains/${d.id}/dkim/rotate`, { token: s.owner.token, body: {} })).body.data;
  for (const server of [s.dns, ...s.resolvers]) server.setTxt(r.dns_record.host, [r.dns_record.value]);
  await tick(s);
  t.equal(await rotationOf(s, r.id), 'active');
  const res = await call(s.app, 'POST', `/admin/dkim-rotations/${r.id}/rollback`, { token: s.admin });
  t.match(res.body.data, { state: 'retired' });
  t.same(await keyStates(s, d.id), { [d.dkim.selector]: 'active', [r.new_selector]: 'retired' });
  const domain = (await call(s.app, 'GET', `/domains/${d.id}`, { token: s.owner.token })).body.data;
  t.equal(domain.dkim.selector, d.dkim.selector);
  t.match(recordOf(domain.records, 'dkim'), { host: recordOf(d.records, 'dkim').host, verified: true }, 're-checked against live DNS');
  t.equal(domain.can_send, true);
});

t.test('a public resolver timing out keeps the rotation publishing with the error recorded', async (t) => {
  const s = await setup(t);
  const d = await verifiedDomain(s, 'slow.example');
  const r = (await call(s.app, 'POST', `/domains/${d.id}/dkim/rotate`, { token: s.owner.token, body: {} })).body.data;
  for (const server of s.resolvers) server.setTxt(r.dns_record.host, [r.dns_record.value]);
  s.resolvers[1]!.setMode('timeout');
  const run = await tick(s);
  t.equal(run.status, 200, 'the tick does not fail');
  t.match(run.body.data.result, { activated: 0, waiting: 1, failed: 0 });
  const view = (await call(s.app, 'GET', `/domains/${d.id}/dkim/rotations/${r.id}`, { token: s.owner.token })).body.data;
  t.equal(view.state, 'publishing');
  t.match(view.error, /2 of 3 .*ETIMEOUT/);
  s.resolvers[1]!.setMode('answer');
  await tick(s);
  t.equal(await rotationOf(s, r.id), 'active');
});

t.test('admin lists: in-flight by default, retired on request, filtered by tenant; admin-only', async (t) => {
  const s = await setup(t);
  const second = await registerTenant(s.app);
  const a = await verifiedDomain(s, 'a.example');
  const b = await verifiedDomain(s, 'b.example', second.token);
  const ra = (await call(s.app, 'POST', `/domains/${a.id}/dkim/rotate`, { token: s.owner.token, body: {} })).body.data;
  const rb = (await call(s.app, 'POST', `/domains/${b.id}/dkim/rotate`, { token: second.token, body: {} })).body.data;
  await call(s.app, 'POST', `/admin/dkim-rotations/${ra.id}/rollback`, { token: s.admin });

  let res = await call(s.app, 'GET', '/admin/dkim-rotations', { token: s.admin });
  t.equal(res.status, 200);
  t.match(res.body.data, { limit: 100, offset: 0 });
  t.same(
    res.body.data.items.map((i: { id: string }) => i.id),
    [rb.id],
    'in-flight only',
  );
  t.match(res.body.data.items[0], { state: 'publishing', dns_record: { host: rb.dns_record.host } });
  res = await call(s.app, 'GET', '/admin/dkim-rotations?include_retired=true', { token: s.admin });
  t.same(new Set(res.body.data.items.map((i: { id: string }) => i.id)), new Set([ra.id, rb.id]));
  res = await call(s.app, 'GET', `/admin/dkim-rotations?include_retired=true&tenant_id=${s.owner.tenantId}`, { token: s.admin });
  t.same(
    res.body.data.items.map((i: { id: string }) => i.id),
    [ra.id],
  );
  res = await call(s.app, 'GET', '/admin/dkim-rotations?include_retired=true&limit=1&offset=1', { token: s.admin });
  t.equal(res.body.data.items.length, 1);
  t.equal((await call(s.app, 'GET', '/admin/dkim-rotations?limit=501', { token: s.admin })).status, 422);
  t.equal((await call(s.app, 'GET', '/admin/dkim-rotations?include_retired=maybe', { token: s.admin })).status, 422);
  t.equal((await call(s.app, 'GET', '/admin/dkim-rotations?tenant_id=nope', { token: s.admin })).status, 422);

  res = await call(s.app, 'GET', `/admin/dkim/rotations?tenant_id=${second.tenantId}`, { token: s.admin });
  t.ok(res.body.data.items.length >= 2);
  t.ok(res.body.data.items.every((i: { tenant_id: string }) => i.tenant_id === second.tenantId));
  res = await call(s.app, 'GET', `/admin/dkim/rotations?since=${encodeURIComponent('2030-01-01T00:00:00Z')}`, { token: s.admin });
  t.same(res.body.data.items, [], 'since filters by time');
  res = await call(s.app, 'GET', '/admin/dkim/rotations?limit=2', { token: s.admin });
  t.equal(res.body.data.items.length, 2);
  t.equal((await call(s.app, 'GET', '/admin/dkim/rotations?since=yesterday', { token: s.admin })).status, 422);

  for (const [method, url] of [
    ['GET', '/admin/dkim-rotations'],
    ['GET', '/admin/dkim/rotations'],
    ['POST', `/admin/dkim-rotations/${rb.id}/rollback`],
    ['POST', `/admin/dkim-rotations/${rb.id}/confirm-published`],
  ] as const) {
    t.equal((await call(s.app, method, url, { token: second.token })).status, 403, `${method} ${url} is super-admin only`);
  }
  t.equal(await rotationOf(s, rb.id), 'publishing', 'the refused calls changed nothing');
  for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
    t.equal((await call(s.app, 'POST', `/admin/dkim-rotations/${id}/rollback`, { token: s.admin })).status, 404);
    t.equal((await call(s.app, 'POST', `/admin/dkim-rotations/${id}/confirm-published`, { token: s.admin })).status, 404);
  }
});

t.test('automatic rotation starts for keys older than dkim.max_key_age_days, once', async (t) => {
  const s = await setup(t, { MAILPATH_CONFIG__DKIM__MAX_KEY_AGE_DAYS: '30' });
  const d = await verifiedDomain(s, 'auto.example');
  let run = await tick(s);
  t.equal(run.body.data.result.autoStarted, 0, 'a young key is left alone');
  s.clock.advance(31 * 86_400_000);
  s.admin = await superAdminToken(s.app);
  s.owner.token = (await call(s.app, 'POST', '/auth/login', { body: { email: s.owner.email, password: s.owner.password } })).body.data.token;
  run = await tick(s);
  t.equal(run.body.data.result.autoStarted, 1);
  const rotations = (await call(s.app, 'GET', `/domains/${d.id}/dkim/rotations`, { token: s.owner.token })).body.data.items;
  t.equal(rotations.length, 1);
  t.match(rotations[0], { initiated_by: 'auto', state: 'publishing', reason: /older than 30 days/ });
  run = await tick(s);
  t.equal(run.body.data.result.autoStarted, 0, 'not again while one is in flight');
  t.equal(await countRows(s.sql, 'dkim_rotations'), 1);
});

t.test("a super-admin can start a rotation on any tenant's domain", async (t) => {
  const s = await setup(t);
  const d = await verifiedDomain(s, 'compromised.example');
  const res = await call(s.app, 'POST', '/admin/dkim-rotations', { token: s.admin, body: { domain_id: d.id, reason: 'key leaked' } });
  t.equal(res.status, 202);
  t.match(res.body.data, { tenant_id: s.owner.tenantId, domain_id: d.id, initiated_by: 'admin', state: 'publishing', reason: 'key leaked' });
  t.equal((await call(s.app, 'POST', '/admin/dkim-rotations', { token: s.admin, body: { domain_id: d.id } })).status, 409);
  t.equal((await call(s.app, 'POST', '/admin/dkim-rotations', { token: s.admin, body: { domain_id: 'nope' } })).status, 404);
  t.equal((await call(s.app, 'POST', '/admin/dkim-rotations', { token: s.owner.token, body: { domain_id: d.id } })).status, 403);
  const [audit] = await s.sql<
    { actor_type: string }[]
  >`select actor_type from audit_events where action = 'dkim.rotation.publishing' and resource_id = ${res.body.data.id}`;
  t.equal(audit!.actor_type, 'user');
});
