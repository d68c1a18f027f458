// Sending domains through the API against real loopback DNS: records to publish, verification, drift, timeouts, ownership, isolation.
import { PassThrough } from 'node:stream';
import t from 'tap';
import { loadSigningKey } from '../../../shared/deliverability/domains/dkim-keys.js';
import { createLogger, type Logger } from '../../../shared/kernel/log.js';
import { buildTestApp, call, countRows, createKey, registerTenant, superAdminToken, type TestApp, type TestLike } from '../../helpers/app.js';
import { startDnsServer, type TestDnsServer } from '../../helpers/dns-server.js';
import { publishRecords, recordOf, type ApiRecord } from '../../helpers/domains.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';

interface Setup extends TestApp {
  dns: TestDnsServer;
}

async function setup(t: TestLike, env: Record<string, string> = {}, log?: Logger): Promise<Setup> {
  const dns = await startDnsServer(t);
  const built = await buildTestApp(t, {
    ...(log ? { log } : {}),
    env: {
      MAILPATH_DNS_SERVERS: dns.address,
      MAILPATH_HOSTNAME: 'mx.mailpath.test',
      MAILPATH_CONFIG__DNS__TIMEOUT_MS: '150',
      MAILPATH_CONFIG__DNS__TRIES: '1',
      ...env,
    },
  });
  return { ...built, dns };
}

async function addDomain(s: Setup, token: string, name: string) {
  const res = await call(s.app, 'POST', '/domains', { token, body: { name } });
  if (res.status !== 201) throw new Error(`add domain: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

t.test('adding a domain lists the exact records to publish and keeps the private key out of sight', async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const res = await call(s.app, 'POST', '/domains', { token: owner.token, body: { name: 'Mail.Example.TEST.' } });
  t.equal(res.status, 201);
  const d = res.body.data;
  t.equal(d.name, 'mail.example.test', 'lower case, no trailing dot');
  t.equal(d.status, 'pending');
  t.equal(d.can_send, false);
  t.match(d.dkim.selector, /^mp\d{8}-[0-9a-f]{8}$/, 'dated selector with a random suffix');
  t.equal(d.dkim.key_bits, 2048);
  const records: ApiRecord[] = d.records;
  t.same(
    records.map((r) => r.kind),
    ['spf', 'dkim', 'dmarc', 'mx'],
  );
  t.match(recordOf(records, 'spf'), { type: 'TXT', host: 'mail.example.test', value: 'v=spf1 include:spf.mx.mailpath.test ~all', required_for_sending: true });
  const dkim = recordOf(records, 'dkim');
  t.equal(dkim.host, `${d.dkim.selector}._domainkey.mail.example.test`);
  t.match(dkim.value, /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/);
  t.ok(dkim.value.length > 255, 'a 2048-bit key record is longer than one TXT string');
  t.match((dkim as unknown as { zone_line: string }).zone_line, /^\S+\. 3600 IN TXT "[^"]{255}" "[^"]+"$/, 'the zone line splits it into strings');
  t.match(recordOf(records, 'dmarc'), { host: '_dmarc.mail.example.test', value: /^v=DMARC1; p=none/ });
  t.match(recordOf(records, 'mx'), { type: 'MX', host: 'mail.example.test', value: 'mx.mailpath.test', priority: 10, required_for_sending: false });
  for (const r of d.records) t.equal(r.verified, false, `${r.kind} starts unverified`);

  const text = JSON.stringify(res.body);
  t.notMatch(text, /PRIVATE KEY/, 'no private key in the response');
  const [stored] = await s.sql<{ sealed: Buffer }[]>`select private_key_sealed as sealed from dkim_keys where domain_id = ${d.id}`;
  t.notMatch(stored!.sealed.toString('latin1'), /PRIVATE KEY|MII/, 'the private key is sealed at rest');

  const got = await call(s.app, 'GET', `/domains/${d.id}`, { token: owner.token });
  t.equal(got.status, 200);
  t.same(got.body.data.records, d.records);
  t.equal(got.body.data.unicode_name, 'mail.example.test');
  const [created] = await s.sql<{ metadata: { domain: string; selector: string } }[]>`
    select metadata from audit_events where action = 'domain.created' and resource_id = ${d.id}`;
  t.same(created!.metadata, { domain: 'mail.example.test', selector: d.dkim.selector }, 'creation audited');
});

t.test('internationalized names are stored in IDNA form; malformed names are 422', async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const idn = await addDomain(s, owner.token, 'Bücher.example');
  t.equal(idn.name, 'xn--bcher-kva.example');
  t.equal(idn.unicode_name, 'bücher.example');
  const bad = [
    '',
    '  ',
    'localhost',
    'example',
    '192.0.2.1',
    '[2001:db8::1]',
    '2001:db8::1',
    'http://example.com',
    'example.com:25',
    'user@example.com',
    '*.example.com',
    'exa mple.com',
    '-bad.example.com',
    'bad-.example.com',
    'under_score.example.com',
    `${'a'.repeat(64)}.example.com`,
    `${'a.'.repeat(130)}com`,
    'example.123',
    'mx.mailpath.test',
    'x.mx.mailpath.test',
    'spf.mx.mailpath.test',
  ];
  for (const name of bad) {
    const res = await call(s.app, 'POST', '/domains', { token: owner.token, body: { name } });
    t.equal(res.status, 422, `${JSON.stringify(name)} → 422`);
    t.equal(res.body.error, 'validation_error');
    t.match(res.body.message, /name/, 'the message names the field');
  }
  t.equal((await call(s.app, 'POST', '/domains', { token: owner.token, body: { name: 'a.example', extra: 1 } })).status, 400, 'unknown field');
  t.equal((await call(s.app, 'POST', '/domains', { token: owner.token, body: { name: 7 } })).status, 422, 'wrong type');
  t.equal(await countRows(s.sql, 'domains'), 1, 'nothing else was written');
});

t.test('a tenant claims a name once (409); other tenants may claim it too (see domains.claims.test.ts); deleting takes the keys', async (t) => {
  const s = await setup(t);
  const { owner, other } = await twoTenants(s.app);
  const d = await addDomain(s, owner.token, 'shared.example');
  t.equal((await call(s.app, 'POST', '/domains', { token: other.token, body: { name: 'SHARED.example' } })).status, 201, "another tenant's claim");
  const twice = await call(s.app, 'POST', '/domains', { token: owner.token, body: { name: 'shared.example' } });
  t.equal(twice.status, 409, 'twice by the same tenant');
  t.equal(twice.body.error, 'conflict');
  t.equal(await countRows(s.sql, 'dkim_keys'), 2, 'the refused claim left no key behind');

  const del = await call(s.app, 'DELETE', `/domains/${d.id}`, { token: owner.token });
  t.equal(del.status, 200);
  t.same(del.body.data, { deleted: true, id: d.id });
  t.equal(await countRows(s.sql, 'dkim_keys', owner.tenantId), 0, 'keys go with the domain');
  t.equal((await call(s.app, 'GET', `/domains/${d.id}`, { token: owner.token })).status, 404);
  t.equal((await call(s.app, 'DELETE', `/domains/${d.id}`, { token: owner.token })).status, 404, 'deleting twice');
  t.equal(
    (await call(s.app, 'POST', '/domains', { token: owner.token, body: { name: 'shared.example' } })).status,
    201,
    'the tenant may claim it again once deleted',
  );
});

t.test('verification: SPF, DKIM (split TXT) and DMARC make a domain sendable; MX only matters for inbound', async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const d = await addDomain(s, owner.token, 'send.example');

  let res = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  t.equal(res.status, 200);
  t.equal(res.body.data.can_send, false);
  t.match(recordOf(res.body.data.records, 'spf'), { verified: false, found: null, error: /no SPF record/, last_checked_at: String });

  publishRecords(s.dns, d.records, ['spf', 'dkim']);
  res = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  t.equal(res.body.data.can_send, false, 'DMARC still missing');
  t.match(recordOf(res.body.data.records, 'dkim'), { verified: true, found: recordOf(d.records, 'dkim').value, error: null });
  t.match(recordOf(res.body.data.records, 'dmarc'), { verified: false, error: /no DMARC record/ });

  publishRecords(s.dns, d.records, ['dmarc']);
  res = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  t.equal(res.body.data.can_send, true);
  t.equal(res.body.data.status, 'verified');
  t.ok(res.body.data.verified_at);
  t.match(recordOf(res.body.data.records, 'mx'), { verified: false, error: /no MX record/ }, 'MX not needed to send');

  publishRecords(s.dns, d.records, ['mx']);
  res = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  t.equal(recordOf(res.body.data.records, 'mx').verified, true);
  const [audit] = await s.sql<{ n: number }[]>`select count(*)::int as n from audit_events where action = 'domain.verified' and resource_id = ${d.id}`;
  t.equal(audit!.n, 1, 'becoming sendable is audited once');
});

t.test('records that are present but wrong say why', async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const d = await addDomain(s, owner.token, 'wrong.example');
  const dkim = recordOf(d.records, 'dkim');
  s.dns.setTxt('wrong.example', ['v=spf1 include:_spf.other.example -all', 'google-site-verification=abc']);
  s.dns.setTxt(dkim.host, ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwrong']);
  s.dns.setTxt('_dmarc.wrong.example', ['v=DMARC1; p=bogus']);
  s.dns.setMx('wrong.example', [{ exchange: 'mx.mailpath.test', priority: 20 }]);
  let res = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  const r = res.body.data.records;
  t.match(recordOf(r, 'spf'), { verified: false, found: 'v=spf1 include:_spf.other.example -all', error: /does not include:spf\.mx\.mailpath\.test/ });
  t.match(recordOf(r, 'dkim'), { verified: false, error: /does not hold this domain's public key/ });
  t.match(recordOf(r, 'dmarc'), { verified: false, error: /no valid p=/ });
  t.match(recordOf(r, 'mx'), { verified: false, found: '20 mx.mailpath.test', error: /priority 20, expected 10/ });

  s.dns.setTxt('wrong.example', ['v=spf1 include:spf.mx.mailpath.test ~all', 'v=spf1 -all']);
  res = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  t.match(recordOf(res.body.data.records, 'spf'), { verified: false, error: /2 SPF records/ });
  s.dns.setTxt('wrong.example', ['v=spf1 mx -include:spf.mx.mailpath.test ~all']);
  res = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  t.equal(recordOf(res.body.data.records, 'spf').verified, false, 'a fail-qualified include does not authorize');
  s.dns.setTxt('wrong.example', ['v=spf1 ip4:192.0.2.0/24 INCLUDE:SPF.MX.MAILPATH.TEST. ~all']);
  res = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  t.equal(recordOf(res.body.data.records, 'spf').verified, true, 'include matched without regard to case or trailing dot');
});

t.test("a subdomain is covered by its parent's DMARC record", async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const d = await addDomain(s, owner.token, 'news.brand.example');
  s.dns.setTxt('_dmarc.brand.example', ['v=DMARC1; p=reject; sp=quarantine']);
  const res = await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  t.match(recordOf(res.body.data.records, 'dmarc'), { verified: true, found: 'v=DMARC1; p=reject; sp=quarantine' });
});

t.test('drift: a verified record that disappears un-verifies the domain until it is back', async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const admin = await superAdminToken(s.app);
  const d = await addDomain(s, owner.token, 'drift.example');
  publishRecords(s.dns, d.records);
  t.equal((await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token })).body.data.can_send, true);

  s.dns.remove('drift.example', 'TXT');
  const run = await call(s.app, 'POST', '/admin/workers/domain-recheck/run-now', { token: admin });
  t.equal(run.status, 200, 'the scheduled re-check, run now');
  t.match(run.body.data, { triggered: true, outcome: 'ok', result: { checked: 1, drifted: 1 } });
  let res = await call(s.app, 'GET', `/domains/${d.id}`, { token: owner.token });
  t.equal(res.body.data.can_send, false);
  t.equal(res.body.data.status, 'drifted');
  t.ok(res.body.data.drifted_at);
  t.match(recordOf(res.body.data.records, 'spf'), { verified: false, drifted_at: String, error: /no SPF record/ });
  t.equal(recordOf(res.body.data.records, 'dkim').verified, true, 'other records stay verified');
  const [drift] = await s.sql<{ metadata: { records: string[]; can_send: boolean } }[]>`
    select metadata from audit_events where action = 'domain.drift' and resource_id = ${d.id}`;
  t.same(drift!.metadata.records, ['spf']);
  t.equal(drift!.metadata.can_send, false);

  publishRecords(s.dns, d.records, ['spf']);
  await call(s.app, 'POST', '/admin/workers/domain-recheck/run-now', { token: admin });
  res = await call(s.app, 'GET', `/domains/${d.id}`, { token: owner.token });
  t.equal(res.body.data.can_send, true, 'verified again once the record is back');
  t.equal(res.body.data.status, 'verified');

  const workers = await call(s.app, 'GET', '/admin/workers', { token: admin });
  const recheck = workers.body.data.items.find((w: { name: string }) => w.name === 'domain-recheck');
  t.match(recheck, { interval_minutes: 360, last_tick_outcome: 'ok', last_tick_at: String, next_tick_estimate: String });
  const names: string[] = workers.body.data.items.map((w: { name: string }) => w.name);
  t.same(names, [...names].sort(), 'sorted by name');
  for (const name of ['best-send-hour', 'dkim-rotator', 'domain-recheck', 'idempotency-purge', 'inbound-purge', 'key-activity-prune']) {
    t.ok(names.includes(name), `${name} listed`);
  }
  t.equal((await call(s.app, 'POST', '/admin/workers/nope/run-now', { token: admin })).status, 404);
  t.equal((await call(s.app, 'POST', '/admin/workers/domain-recheck/run-now', { token: owner.token })).status, 403, 'super-admin only');
});

t.test('DNS timeouts are recorded as errors: never a crash, never a false verified, never a false drift', async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const fresh = await addDomain(s, owner.token, 'fresh.example');
  const sending = await addDomain(s, owner.token, 'sending.example');
  publishRecords(s.dns, fresh.records);
  publishRecords(s.dns, sending.records);
  t.equal((await call(s.app, 'POST', `/domains/${sending.id}/verify`, { token: owner.token })).body.data.can_send, true);

  s.dns.setMode('timeout');
  let res = await call(s.app, 'POST', `/domains/${fresh.id}/verify`, { token: owner.token });
  t.equal(res.status, 200);
  t.equal(res.body.data.can_send, false, 'a timeout never verifies');
  for (const r of res.body.data.records) t.match(r, { verified: false, error: /DNS look-up failed.*ETIMEOUT/ }, `${r.kind} error recorded`);

  res = await call(s.app, 'POST', `/domains/${sending.id}/verify`, { token: owner.token });
  t.equal(res.body.data.can_send, true, 'a timeout does not un-verify');
  t.equal(res.body.data.drifted_at, null, 'nor count as drift');
  t.match(recordOf(res.body.data.records, 'spf'), { verified: true, error: /ETIMEOUT/, found: /^v=spf1/ });

  s.dns.setMode('servfail');
  res = await call(s.app, 'POST', `/domains/${sending.id}/verify`, { token: owner.token });
  t.match(recordOf(res.body.data.records, 'dkim'), { verified: true, error: /ESERVFAIL/ });

  s.dns.setMode('answer');
  res = await call(s.app, 'POST', `/domains/${sending.id}/verify`, { token: owner.token });
  t.match(recordOf(res.body.data.records, 'spf'), { verified: true, error: null });
});

t.test('list: cursor pages, newest first; a forged cursor is 400', async (t) => {
  const s = await setup(t);
  const { owner, other } = await twoTenants(s.app);
  const made = [];
  for (const name of ['one.example', 'two.example', 'three.example']) made.push(await addDomain(s, owner.token, name));
  await addDomain(s, other.token, 'others.example');

  const first = await call(s.app, 'GET', '/domains?limit=2', { token: owner.token });
  t.equal(first.status, 200);
  t.equal(first.body.total, 3);
  t.same(
    first.body.data.map((d: { name: string }) => d.name),
    ['three.example', 'two.example'],
  );
  t.type(first.body.next_cursor, 'string');
  const second = await call(s.app, 'GET', `/domains?limit=2&after=${first.body.next_cursor}`, { token: owner.token });
  t.same(
    second.body.data.map((d: { name: string }) => d.name),
    ['one.example'],
  );
  t.equal(second.body.next_cursor, null);
  for (const bad of ['nonsense', Buffer.from('2026-01-01T00:00:00.000Z|not-a-uuid').toString('base64url')]) {
    const res = await call(s.app, 'GET', `/domains?after=${bad}`, { token: owner.token });
    t.equal(res.status, 400, `cursor ${bad}`);
    t.equal(res.body.error, 'bad_request');
  }
  t.equal((await call(s.app, 'GET', '/domains?limit=0', { token: owner.token })).status, 422);
  t.equal((await call(s.app, 'GET', '/domains?limit=201', { token: owner.token })).status, 422);
});

t.test('scopes: domains:read reads, domains:write changes', async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const d = await addDomain(s, owner.token, 'scoped.example');
  const reader = await createKey(s.app, owner, { scopes: ['domains:read'] });
  const writer = await createKey(s.app, owner, { scopes: ['domains:write'] });
  t.equal((await call(s.app, 'GET', `/domains/${d.id}`, { token: reader.key })).status, 200);
  t.equal((await call(s.app, 'GET', '/domains', { token: reader.key })).status, 200);
  for (const [method, url] of [
    ['POST', '/domains'],
    ['POST', `/domains/${d.id}/verify`],
    ['DELETE', `/domains/${d.id}`],
    ['POST', `/domains/${d.id}/dkim/rotate`],
  ] as const) {
    const res = await call(s.app, method, url, { token: reader.key, ...(method === 'POST' && url === '/domains' ? { body: { name: 'x.example' } } : {}) });
    t.equal(res.status, 403, `${method} ${url} needs domains:write`);
    t.equal(res.body.error, 'invalid_scope');
  }
  t.equal((await call(s.app, 'GET', '/domains', { token: writer.key })).status, 403, 'write does not imply read');
  t.equal((await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: writer.key })).status, 200);
  t.equal((await call(s.app, 'GET', '/domains')).status, 401);
});

t.test("another tenant's domain and rotation ids are 404", async (t) => {
  const s = await setup(t);
  const { owner, other } = await twoTenants(s.app);
  const d = await addDomain(s, owner.token, 'mine.example');
  publishRecords(s.dns, d.records);
  t.equal((await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token })).body.data.status, 'verified', 'only an owned domain rotates');
  const rotation = await call(s.app, 'POST', `/domains/${d.id}/dkim/rotate`, { token: owner.token, body: {} });
  t.equal(rotation.status, 202);
  const otherDomain = await addDomain(s, other.token, 'theirs.example');
  const otherKey = await createKey(s.app, other);
  const requests = [
    { method: 'GET' as const, url: `/domains/${d.id}` },
    { method: 'POST' as const, url: `/domains/${d.id}/verify` },
    { method: 'POST' as const, url: `/domains/${d.id}/dkim/rotate`, body: { reason: 'hijack' } },
    { method: 'GET' as const, url: `/domains/${d.id}/dkim/rotations` },
    { method: 'GET' as const, url: `/domains/${d.id}/dkim/rotations/${rotation.body.data.id}` },
    { method: 'GET' as const, url: `/domains/${otherDomain.id}/dkim/rotations/${rotation.body.data.id}` },
    { method: 'DELETE' as const, url: `/domains/${d.id}` },
    { method: 'GET' as const, url: '/domains/not-a-uuid' },
    { method: 'GET' as const, url: `/domains/${otherDomain.id}/dkim/rotations/not-a-uuid` },
  ];
  await assertForeign404(t, s.app, other.token, requests);
  await assertForeign404(t, s.app, otherKey.key, requests);
  t.equal((await call(s.app, 'GET', `/domains/${d.id}`, { token: owner.token })).status, 200, 'still there for its owner');
  t.equal(await countRows(s.sql, 'dkim_rotations'), 1, 'no rotation was started by the other tenant');
});

t.test('private keys never reach the logs, even at trace level', async (t) => {
  const output = new PassThrough();
  const lines: string[] = [];
  output.on('data', (chunk: Buffer) => lines.push(chunk.toString('utf8')));
  const s = await setup(t, {}, createLogger('trace', output));
  const owner = await registerTenant(s.app);
  const admin = await superAdminToken(s.app);
  const d = await addDomain(s, owner.token, 'logged.example');
  publishRecords(s.dns, d.records);
  await call(s.app, 'POST', `/domains/${d.id}/verify`, { token: owner.token });
  await call(s.app, 'POST', `/domains/${d.id}/dkim/rotate`, { token: owner.token, body: { reason: 'log check' } });
  await call(s.app, 'POST', '/admin/workers/dkim-rotator/run-now', { token: admin });
  const signing = await loadSigningKey(s.sql, s.ctx.vault, d.id);
  const body = signing!.privateKeyPem.split('\n').slice(1, 3).join('');
  const text = lines.join('');
  t.ok(text.length > 1000, 'the requests were logged');
  t.notMatch(text, /PRIVATE KEY/);
  t.notOk(text.includes(body), 'no part of the private key in the log');
});
