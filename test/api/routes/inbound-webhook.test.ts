// Inbound webhook settings through the API: the secret shown once, rotation, partial updates, the URL policy through loopback DNS, who may call, audit,
// test-send.
import { createHmac } from 'node:crypto';
import t from 'tap';
import { simpleParser } from 'mailparser';
import { openSecret } from '../../../shared/webhooks/inbound/secret.js';
import { buildTestApp, call, countRows, createKey, registerTenant, type TestLike } from '../../helpers/app.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';

const URL_PATH = '/settings/inbound-webhook';
const SECRET = /^whsec_[A-Za-z0-9_-]{43}$/;

/** An API with the shipped URL policy and a loopback DNS server naming hosts public and internal. */
async function strictApp(t: TestLike) {
  const dns = await startDnsServer(t);
  dns.setA('hooks.acme.test', ['93.184.216.34']);
  dns.setA('other.acme.test', ['2606:4700:4700::1111']);
  dns.setA('private.acme.test', ['10.0.0.1']);
  dns.setA('loopback.acme.test', ['127.0.0.1']);
  dns.setA('v6-loopback.acme.test', ['::1']);
  dns.setA('mapped.acme.test', ['::ffff:7f00:1']);
  const app = await buildTestApp(t, { env: { MAILPATH_DNS_SERVERS: dns.address, MAILPATH_CONFIG__DNS__TIMEOUT_MS: '300', MAILPATH_CONFIG__DNS__TRIES: '1' } });
  return { ...app, dns };
}

/** An API allowed to reach receivers on 127.0.0.1 over http, with a short receiver timeout. */
const localApp = (t: TestLike) =>
  buildTestApp(t, {
    env: {
      MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true',
      MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true',
      MAILPATH_CONFIG__WEBHOOKS__TIMEOUT_SECONDS: '0.5',
    },
  });

t.test('the secret is revealed once on creation and once per rotation; reads and other changes never show it', async (t) => {
  const s = await strictApp(t);
  const owner = await registerTenant(s.app);
  const before = await call(s.app, 'GET', URL_PATH, { token: owner.token });
  t.equal(before.status, 200);
  t.same(before.body.data, { webhook_url: null, enabled: false, secret: null, secret_revealed_once: false, secret_rotated_at: null, updated_at: null });

  const created = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: 'https://hooks.acme.test/inbound', enabled: true } });
  t.equal(created.status, 200);
  t.match(created.body.data, {
    webhook_url: 'https://hooks.acme.test/inbound',
    enabled: true,
    secret: SECRET,
    secret_revealed_once: true,
    secret_rotated_at: String,
  });
  const first = created.body.data.secret as string;

  const read = await call(s.app, 'GET', URL_PATH, { token: owner.token });
  t.match(read.body.data, { webhook_url: 'https://hooks.acme.test/inbound', enabled: true, secret: null, secret_revealed_once: false });
  const changed = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: 'https://other.acme.test/in' } });
  t.match(
    changed.body.data,
    { webhook_url: 'https://other.acme.test/in', enabled: true, secret: null, secret_revealed_once: false },
    'partial update keeps enabled',
  );

  const rotated = await call(s.app, 'PATCH', `${URL_PATH}?rotate_secret=true`, { token: owner.token, body: {} });
  t.equal(rotated.status, 200);
  t.match(rotated.body.data, { webhook_url: 'https://other.acme.test/in', enabled: true, secret: SECRET, secret_revealed_once: true });
  t.not(rotated.body.data.secret, first, 'a new secret');
  t.match((await call(s.app, 'GET', URL_PATH, { token: owner.token })).body.data, { secret: null, secret_revealed_once: false });

  const [row] = await s.sql<{ secret_sealed: string }[]>`select secret_sealed from inbound_webhooks where tenant_id = ${owner.tenantId}`;
  t.notOk(row!.secret_sealed.includes(rotated.body.data.secret.slice(6)), 'not stored in clear');
  t.equal(openSecret(s.ctx.vault, owner.tenantId, row!.secret_sealed), rotated.body.data.secret, 'stored sealed, opens to the revealed secret');

  const noop = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { enabled: true } });
  t.match(noop.body.data, { secret: null, secret_revealed_once: false });
  const audit = await s.sql<{ action: string; actor_id: string; metadata: Record<string, unknown> }[]>`
    select action, actor_id, metadata from audit_events where tenant_id = ${owner.tenantId} and resource_type = 'inbound_webhook' order by id`;
  t.same(
    audit.map((a) => a.metadata['changed']),
    [['webhook_url', 'enabled'], ['webhook_url'], []],
    'one row per change; the no-op wrote none',
  );
  t.match(audit, [
    { action: 'inbound_webhook.updated', actor_id: owner.userId, metadata: { secret_created: true, secret_rotated: false } },
    { metadata: { secret_created: false, secret_rotated: false } },
    { metadata: { secret_rotated: true } },
  ]);
  t.notOk(JSON.stringify(audit).includes('whsec_'), 'no secret in the audit trail');
});

t.test('enabling needs a URL; removing the URL switches the webhook off', async (t) => {
  const s = await strictApp(t);
  const owner = await registerTenant(s.app);
  const bare = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { enabled: true } });
  t.equal(bare.status, 422);
  t.match(bare.body, { error: 'validation_error', message: /^webhook_url: is required to enable the webhook/ });
  t.equal(await countRows(s.sql, 'inbound_webhooks'), 0, 'nothing stored, no secret made');

  const off = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: 'https://hooks.acme.test/x' } });
  t.match(off.body.data, { enabled: false, secret: SECRET, secret_revealed_once: true }, 'first configuration, off until enabled');
  t.equal((await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { enabled: true } })).body.data.enabled, true);
  const removed = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: null } });
  t.match(removed.body.data, { webhook_url: null, enabled: false, secret: null });
  const both = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: null, enabled: true } });
  t.equal(both.status, 422);
});

t.test('the URL policy: https only, public addresses only (checked through DNS), else 422 naming webhook_url', async (t) => {
  const s = await strictApp(t);
  const owner = await registerTenant(s.app);
  const refused: [string, RegExp][] = [
    ['http://hooks.acme.test/inbound', /must be an https:\/\/ URL/],
    // A name's refusal says the class of address only (no DNS oracle); a literal is named back.
    ['https://private.acme.test/in', /host private\.acme\.test resolves to a private address, which webhooks may not reach$/],
    ['https://loopback.acme.test/in', /host loopback\.acme\.test resolves to a loopback address, which webhooks may not reach$/],
    ['https://v6-loopback.acme.test/in', /resolves to a loopback address, which/],
    ['https://mapped.acme.test/in', /resolves to a loopback \(IPv4 inside IPv6\) address, which/],
    ['https://127.0.0.1/in', /is the loopback address 127\.0\.0\.1/],
    ['https://[::1]/in', /loopback address ::1/],
    ['https://169.254.169.254/latest', /link-local/],
    ['https://missing.acme.test/in', /does not resolve/],
    ['https://user:pw@hooks.acme.test/in', /user name or password/],
    ['not a url', /spaces|absolute URL/],
    [`https://hooks.acme.test/${'a'.repeat(2100)}`, /webhook_url/],
  ];
  for (const [url, reason] of refused) {
    const res = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: url, enabled: true } });
    t.equal(res.status, 422, url.slice(0, 50));
    t.equal(res.body.error, 'validation_error');
    t.match(res.body.message, /^webhook_url: /);
    t.match(res.body.message, reason);
  }
  t.equal(await countRows(s.sql, 'inbound_webhooks'), 0, 'nothing stored');

  const bad: [unknown, number, RegExp][] = [
    [{ webhook_url: 'https://hooks.acme.test/', extra: 1 }, 400, /unexpected field/],
    [{ enabled: 'yes' }, 422, /^enabled: /],
    [{ webhook_url: 42 }, 422, /^webhook_url: /],
  ];
  for (const [body, status, message] of bad) {
    const res = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body });
    t.equal(res.status, status, JSON.stringify(body));
    t.match(res.body.message, message);
  }
  t.equal((await call(s.app, 'PATCH', `${URL_PATH}?rotate_secret=maybe`, { token: owner.token, body: {} })).status, 422);
  t.equal((await call(s.app, 'PATCH', `${URL_PATH}?rotate=true`, { token: owner.token, body: {} })).status, 400, 'a misspelt flag is not silently ignored');
  t.equal((await call(s.app, 'PATCH', URL_PATH, { token: owner.token, raw: '{"webhook_url":' })).status, 400);
});

t.test('who may call: sessions and unrestricted API keys; scoped keys get 403; each tenant sees only its own settings', async (t) => {
  const s = await strictApp(t);
  const owner = await registerTenant(s.app);
  const other = await registerTenant(s.app);
  const full = await createKey(s.app, owner);
  const scoped = await createKey(s.app, owner, { scopes: ['transactional:send', 'domains:write'] });
  for (const [method, url] of [
    ['GET', URL_PATH],
    ['PATCH', URL_PATH],
    ['POST', `${URL_PATH}/test-send`],
  ] as const) {
    t.equal((await call(s.app, method, url, method === 'PATCH' ? { body: {} } : {})).status, 401, `${method} without credential`);
    const res = await call(s.app, method, url, { token: scoped.key, ...(method === 'PATCH' ? { body: { enabled: false } } : {}) });
    t.equal(res.status, 403, `${method} with a scoped key`);
    t.equal(res.body.error, 'invalid_scope');
  }
  const byKey = await call(s.app, 'PATCH', URL_PATH, { token: full.key, body: { webhook_url: 'https://hooks.acme.test/k', enabled: true } });
  t.equal(byKey.status, 200);
  t.match(byKey.body.data, { secret: SECRET });
  const [audit] = await s.sql<{ actor_type: string; actor_id: string }[]>`
    select actor_type, actor_id from audit_events where tenant_id = ${owner.tenantId} and action = 'inbound_webhook.updated'`;
  t.same(audit, { actor_type: 'api_key', actor_id: full.id });

  const theirs = await call(s.app, 'GET', URL_PATH, { token: other.token });
  t.match(theirs.body.data, { webhook_url: null, enabled: false }, "another tenant does not see the owner's webhook");
  await call(s.app, 'PATCH', URL_PATH, { token: other.token, body: { webhook_url: 'https://other.acme.test/theirs', enabled: true } });
  t.match((await call(s.app, 'GET', URL_PATH, { token: owner.token })).body.data, { webhook_url: 'https://hooks.acme.test/k' }, 'and cannot change it');
});

t.test('test-send: a synthetic message signed like real mail, once, with each receiver answer reported', async (t) => {
  const s = await localApp(t);
  const owner = await registerTenant(s.app);
  const none = await call(s.app, 'POST', `${URL_PATH}/test-send`, { token: owner.token });
  t.equal(none.status, 409, 'no webhook configured');
  t.match(none.body, { error: 'conflict', message: /no inbound webhook URL is configured/ });

  const receiver = await startWebhookReceiver(t);
  const made = await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: receiver.url } });
  const secret = made.body.data.secret as string;
  const ok = await call(s.app, 'POST', `${URL_PATH}/test-send`, { token: owner.token });
  t.equal(ok.status, 200);
  t.match(ok.body.data, { delivered: true, http_status: 200, round_trip_ms: Number, error: null }, 'works while the webhook is still off');
  const req = receiver.requests[0]!;
  t.equal(req.headers['x-mp-inbound-sig'], `hmac-sha256=${createHmac('sha256', secret).update(req.body).digest('hex')}`);
  t.match(req.headers, {
    'content-type': 'message/rfc822',
    'x-mp-inbound-tenant': owner.tenantId,
    'x-mp-inbound-recipient': 'webhook-test@mx.mailpath.local',
    'x-mp-inbound-test': 'true',
  });
  const parsed = await simpleParser(req.body);
  t.equal(parsed.subject, 'Mailpath inbound webhook test');
  t.match(parsed.text, /test message from Mailpath/);

  const cases: [Parameters<typeof receiver.answer>[0], Record<string, unknown>][] = [
    [
      { status: 400, body: 'no thanks' },
      { delivered: false, http_status: 400, error: 'HTTP 400: no thanks' },
    ],
    [
      { status: 429, headers: { 'retry-after': '60' } },
      { delivered: false, http_status: 429, error: 'HTTP 429' },
    ],
    [{ status: 500 }, { delivered: false, http_status: 500, error: 'HTTP 500' }],
    [{ hang: true }, { delivered: false, http_status: null, error: 'no answer within 0.5 s' }],
    [{ drop: true }, { delivered: false, http_status: null, error: /socket|closed/i }],
  ];
  for (const [answer, expected] of cases) {
    receiver.answer(answer);
    const res = await call(s.app, 'POST', `${URL_PATH}/test-send`, { token: owner.token });
    t.equal(res.status, 200, JSON.stringify(answer));
    t.match(res.body.data, { ...expected, round_trip_ms: Number });
  }
  t.equal(receiver.requests.length, 1 + cases.length, 'one POST per test-send, never retried');
  t.equal(await countRows(s.sql, 'inbound_webhook_deliveries'), 0, 'test-sends are not deliveries');

  await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: 'http://127.0.0.1:9/closed' } });
  t.match((await call(s.app, 'POST', `${URL_PATH}/test-send`, { token: owner.token })).body.data, {
    delivered: false,
    http_status: null,
    error: /ECONNREFUSED/,
  });
  await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: null } });
  t.equal((await call(s.app, 'POST', `${URL_PATH}/test-send`, { token: owner.token })).status, 409, 'URL removed');
  t.equal((await call(s.app, 'POST', `${URL_PATH}/test-send`, { token: owner.token, body: { x: 1 } })).status, 400, 'takes no body');
});

t.test('test-send under the shipped policy refuses a loopback receiver without connecting', async (t) => {
  const s = await buildTestApp(t, { env: { MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true', MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true' } });
  const owner = await registerTenant(s.app);
  const receiver = await startWebhookReceiver(t);
  await call(s.app, 'PATCH', URL_PATH, { token: owner.token, body: { webhook_url: receiver.url } });
  // The operator tightens the policy after the URL was accepted: the check at sending time applies it.
  s.ctx.config.webhooks.allow_private_addresses = false;
  const res = await call(s.app, 'POST', `${URL_PATH}/test-send`, { token: owner.token });
  t.match(res.body.data, { delivered: false, http_status: null, error: /is the loopback address 127\.0\.0\.1/ });
  t.equal(receiver.connections(), 0);
});
