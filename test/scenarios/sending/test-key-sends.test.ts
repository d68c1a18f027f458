// A first send with a test key: from any domain the tenant has added (verified or not), simulated, fully composed and DKIM-signed, and downloadable byte for
// byte from GET /sends/{id}/raw; live keys keep the 412 (the same over SMTP submission: test/mta/submission/server.test.ts).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant, type TestTenant } from '../../helpers/app.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { publishRecords, type ApiRecord } from '../../helpers/domains.js';
import { assertForeign404 } from '../../helpers/isolation.js';
import { join } from 'node:path';
import { projectRoot } from '../../../shared/kernel/paths.js';

const PYTHON = '/usr/bin/python3';
const VERIFIER = join(projectRoot(), 'test', 'helpers', 'dkim-verify.py');
const verifierInstalled = existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import dkim, dns.resolver']).status === 0;

const dns = await startDnsServer(t);
const { app, sql } = await buildTestApp(t, {
  env: {
    MAILPATH_DNS_SERVERS: dns.address,
    MAILPATH_CONFIG__DKIM__KEY_BITS: '1024',
  },
});

/** The independent verifier (Debian python3-dkim) on a message, looking keys up on the loopback DNS server. */
function dkimverify(message: Buffer): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(PYTHON, [VERIFIER, dns.address], { timeout: 20_000 });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ ok: code === 0, output: output.trim() }));
    child.stdin.end(message);
  });
}

interface Newcomer {
  tenant: TestTenant;
  /** A test key and a live key, both with transactional:send and events:read. */
  testKey: string;
  liveKey: string;
  /** A domain added through the API and never verified. */
  domain: { id: string; name: string; records: ApiRecord[] };
}

/** A tenant as it is right after registering: two keys and one domain added, its records not published yet. */
async function newcomer(): Promise<Newcomer> {
  const tenant = await registerTenant(app);
  const scopes = ['transactional:send', 'events:read'];
  const testKey = (await createKey(app, tenant, { mode: 'test', scopes })).key;
  const liveKey = (await createKey(app, tenant, { scopes })).key;
  const added = await call(app, 'POST', '/domains', { token: tenant.token, body: { name: `first-${randomUUID().slice(0, 8)}.example` } });
  if (added.status !== 201) throw new Error(`domain: ${added.status} ${JSON.stringify(added.body)}`);
  return { tenant, testKey, liveKey, domain: { id: added.body.data.id, name: added.body.data.name, records: added.body.data.records } };
}

const message = (n: Newcomer, over: Record<string, unknown> = {}) => ({
  to: 'ann@dest.example',
  from_email: `hello@${n.domain.name}`,
  from_name: 'Acme',
  subject: 'Your first message',
  body_text: 'It works.',
  body_html: '<p>It works.</p>',
  ...over,
});

const raw = (id: string, token: string) => app.inject({ method: 'GET', url: `/api/v1/sends/${id}/raw`, headers: { authorization: `Bearer ${token}` } });

t.test("a test key sends from an added, unverified domain: simulated, signed with the domain's key, the raw download is the stored message", async (t) => {
  const n = await newcomer();
  const res = await call(app, 'POST', '/transactional/send', { token: n.testKey, body: message(n) });
  t.equal(res.status, 202, JSON.stringify(res.body));
  t.equal(res.body.data.status, 'simulated');
  t.equal(res.headers['x-quota-used'], '0', 'no quota used');
  const id = res.body.data.message_id as string;
  const [jobs] = await sql<{ n: number }[]>`select count(*)::int as n from delivery_queue where send_id = ${id}`;
  t.equal(jobs!.n, 0, 'never queued for delivery');

  const detail = await call(app, 'GET', `/sends/${id}`, { token: n.testKey });
  t.equal(detail.status, 200);
  t.match(detail.body.data, { id, status: 'simulated', mode: 'test', from_email: `hello@${n.domain.name}`, status_detail: /test key/ });
  const [stored] = await sql<{ message: Buffer }[]>`select message from sends where id = ${id}`;
  t.equal(detail.body.data.size_bytes, stored!.message.length);

  const download = await raw(id, n.testKey);
  t.equal(download.statusCode, 200);
  t.equal(download.headers['content-type'], 'message/rfc822');
  t.ok(download.rawPayload.equals(stored!.message), 'byte for byte the stored message');
  const text = download.rawPayload.toString('utf8');
  const selector = n.domain.records.find((r) => r.kind === 'dkim')!.host.split('.')[0]!;
  t.match(
    text,
    new RegExp(`^DKIM-Signature: [^]*d=${n.domain.name.replace(/\./g, '\\.')};[^]*s=${selector};`),
    "signed with the domain's key from its creation",
  );
  t.match(text, /\r\nFrom: Acme <hello@first-/);
  t.match(text, /\r\nTo: ann@dest\.example\r\n/);
  t.match(text, new RegExp(`\\r\\nMessage-ID: <${id}@mx\\.mailpath\\.local>\\r\\n`));
  t.match(text, /Content-Type: multipart\/alternative/);

  // Published the way the tenant will publish it, the key verifies the signature in an independent implementation.
  t.ok(verifierInstalled, 'the verifier is installed (apt-get install python3-dkim python3-dnspython; .ci/run does it)');
  if (!verifierInstalled) return;
  publishRecords(dns, n.domain.records, ['dkim']);
  const verified = await dkimverify(download.rawPayload);
  t.ok(verified.ok, `python3-dkim verifies it: ${verified.output}`);
  const tampered = Buffer.from(text.replace('It works.', 'It worked.'));
  t.notOk((await dkimverify(tampered)).ok, 'a changed body does not verify');
});

t.test('a live key still gets 412 until a domain is verified; unknown domains are 422 naming from_email for both kinds of key', async (t) => {
  const n = await newcomer();
  const live = await call(app, 'POST', '/transactional/send', { token: n.liveKey, body: message(n) });
  t.equal(live.status, 412);
  t.equal(live.body.error, 'no_verified_domain');
  for (const key of [n.testKey, n.liveKey]) {
    const unknown = await call(app, 'POST', '/transactional/send', { token: key, body: message(n, { from_email: 'hello@not-added.example' }) });
    if (key === n.liveKey) {
      t.equal(unknown.status, 412, 'a live key without a verified domain is 412 whatever the From');
      continue;
    }
    t.equal(unknown.status, 422);
    t.equal(unknown.body.error, 'validation_error');
    t.match(unknown.body.message, /^from_email: its domain not-added\.example is not a domain of this tenant/);
  }
  // Another tenant's domain is not this tenant's, verified or not.
  const other = await newcomer();
  const foreign = await call(app, 'POST', '/transactional/send', { token: n.testKey, body: message(n, { from_email: `hello@${other.domain.name}` }) });
  t.equal(foreign.status, 422);
  t.match(foreign.body.message, /^from_email: /);
  // Once verified, the live key sends (queued) and a domain never added is still 422 for it.
  await sql`update domains set verified_at = now(), owned_at = now(), expires_at = null where id = ${n.domain.id}`;
  const queued = await call(app, 'POST', '/transactional/send', { token: n.liveKey, body: message(n) });
  t.equal(queued.status, 202);
  t.equal(queued.body.data.status, 'queued');
  const liveUnknown = await call(app, 'POST', '/transactional/send', { token: n.liveKey, body: message(n, { from_email: 'hello@not-added.example' }) });
  t.equal(liveUnknown.status, 422);
  t.match(liveUnknown.body.message, /^from_email: its domain not-added\.example is not a verified sending domain/);
  const [count] = await sql<{ n: number }[]>`select count(*)::int as n from sends where tenant_id = ${n.tenant.tenantId}`;
  t.equal(count!.n, 1, 'nothing stored for the refusals');
});

t.test("the raw download: 404 for another tenant's send, an unknown id and a dropped send; events:read scope", async (t) => {
  const n = await newcomer();
  const sent = await call(app, 'POST', '/transactional/send', { token: n.testKey, body: message(n) });
  const id = sent.body.data.message_id as string;
  t.equal((await raw(id, n.tenant.token)).statusCode, 200, "the tenant's user session may download it");

  const other = await newcomer();
  await assertForeign404(t, app, other.testKey, [
    { method: 'GET', url: `/sends/${id}/raw` },
    { method: 'GET', url: `/sends/${id}` },
  ]);
  await assertForeign404(t, app, other.tenant.token, [{ method: 'GET', url: `/sends/${id}/raw` }]);
  const unknown = await call(app, 'GET', `/sends/${randomUUID()}/raw`, { token: n.testKey });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error, 'not_found');
  t.equal((await call(app, 'GET', '/sends/not-a-uuid/raw', { token: n.testKey })).status, 404);

  // A suppressed recipient is dropped at acceptance (live key, verified domain): nothing is built, so nothing to download.
  await sql`update domains set verified_at = now(), owned_at = now(), expires_at = null where id = ${n.domain.id}`;
  await call(app, 'POST', '/suppressions', { token: n.tenant.token, body: { email: 'gone@dest.example', reason: 'manual' } });
  const dropped = await call(app, 'POST', '/transactional/send', { token: n.liveKey, body: message(n, { to: 'gone@dest.example' }) });
  t.equal(dropped.body.data.status, 'dropped', JSON.stringify(dropped.body));
  const none = await call(app, 'GET', `/sends/${dropped.body.data.message_id}/raw`, { token: n.liveKey });
  t.equal(none.status, 404);
  t.match(none.body.message, /dropped/);

  const narrow = await createKey(app, n.tenant, { scopes: ['transactional:send'] });
  const refused = await call(app, 'GET', `/sends/${id}/raw`, { token: narrow.key });
  t.equal(refused.status, 403);
  t.equal(refused.body.error, 'invalid_scope');
  t.equal((await call(app, 'GET', `/sends/${id}/raw`)).status, 401);

  const doc = (await call(app, 'GET', '/openapi.json')).body;
  t.ok(doc.paths['/sends/{id}/raw'].get.responses['200'].content['message/rfc822'], 'documented as message/rfc822');
});
