// One signed POST against real receivers on 127.0.0.1: exact bytes and headers, the HMAC, each kind of answer, the deadline, and the address pinned to what
// the policy checked.
import { createHmac } from 'node:crypto';
import t from 'tap';
import { loadConfig, type WebhooksConfig } from '../../../shared/config/index.js';
import { createResolver, type DnsResolver } from '../../../shared/kernel/dns.js';
import { checkWebhookUrl } from '../../../shared/webhooks/inbound/url-policy.js';
import { postToWebhook, type WebhookPost } from '../../../jobs/inbound-webhooks/deliver.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { startRogueHttp, type RogueHttpMode } from '../../helpers/rogue-http.js';
import { freePort } from '../../helpers/net.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';
import { SAMPLE_RAW } from './fixture.js';

const shipped = loadConfig({}).webhooks;
/** Loopback receivers need both allowances; a short timeout keeps the hanging receiver cheap. */
const local: WebhooksConfig = { ...shipped, allow_http: true, allow_private_addresses: true, timeout_seconds: 0.5 };
const noDns: DnsResolver = { txt: async () => [], mx: async () => [], addresses: async () => [] };
const TENANT = '0b8c2a4e-5d1f-4c3b-9a7e-6f2d1c0b9a8e';

const post = (url: string, over: Partial<WebhookPost> = {}): WebhookPost => ({
  url,
  secret: 'whsec_test-secret',
  tenantId: TENANT,
  recipient: 'support@acme.example',
  deliveryId: '5f0e9d8c-7b6a-4c5d-8e9f-0a1b2c3d4e5f',
  attempt: 1,
  body: SAMPLE_RAW,
  ...over,
});

t.test('the POST carries the exact stored bytes, signed: the receiver recomputes the HMAC over what it got', async (t) => {
  const receiver = await startWebhookReceiver(t);
  const result = await postToWebhook({ dns: noDns, webhooks: local }, post(receiver.url, { attempt: 3 }));
  t.match(result, { kind: 'answered', status: 200, snippet: '' });
  t.equal(receiver.requests.length, 1);
  const req = receiver.requests[0]!;
  t.equal(req.method, 'POST');
  t.equal(req.url, '/hook');
  t.ok(req.body.equals(SAMPLE_RAW), 'body is the raw message, byte for byte');
  t.equal(req.headers['content-type'], 'message/rfc822');
  const expected = `hmac-sha256=${createHmac('sha256', 'whsec_test-secret').update(req.body).digest('hex')}`;
  t.equal(req.headers['x-mp-inbound-sig'], expected);
  t.match(req.headers['x-mp-inbound-sig'], /^hmac-sha256=[0-9a-f]{64}$/, 'lowercase hex');
  t.equal(req.headers['x-mp-inbound-tenant'], TENANT);
  t.equal(req.headers['x-mp-inbound-recipient'], 'support@acme.example');
  t.equal(req.headers['x-mp-inbound-delivery'], '5f0e9d8c-7b6a-4c5d-8e9f-0a1b2c3d4e5f');
  t.equal(req.headers['x-mp-inbound-attempt'], '3');
  t.equal(req.headers['x-mp-inbound-test'], undefined, 'real deliveries carry no test marker');
  t.equal(req.headers['content-length'], String(SAMPLE_RAW.length));

  await postToWebhook({ dns: noDns, webhooks: local }, post(receiver.url, { secret: 'whsec_other' }));
  t.not(receiver.requests[1]!.headers['x-mp-inbound-sig'], req.headers['x-mp-inbound-sig'], 'another secret, another signature');

  await postToWebhook({ dns: noDns, webhooks: local }, post(receiver.url, { recipient: 'jürgen@bücher.example', test: true }));
  t.equal(receiver.requests[2]!.headers['x-mp-inbound-recipient'], "UTF-8''j%C3%BCrgen%40b%C3%BCcher.example", 'non-ASCII as an RFC 8187 ext-value');
  t.equal(receiver.requests[2]!.headers['x-mp-inbound-test'], 'true');
});

t.test('each receiver answer is reported as it came: status, Retry-After, the start of the body', async (t) => {
  const receiver = await startWebhookReceiver(t);
  receiver.answerNext(
    { status: 400, body: 'bad\r\nrequest  here' },
    { status: 429, headers: { 'retry-after': '120' } },
    { status: 500, body: 'x'.repeat(5000) },
    { status: 302, headers: { location: `http://127.0.0.1:${receiver.port}/elsewhere` } },
  );
  const deps = { dns: noDns, webhooks: local };
  t.match(await postToWebhook(deps, post(receiver.url)), { kind: 'answered', status: 400, snippet: 'bad request here', retryAfter: undefined });
  t.match(await postToWebhook(deps, post(receiver.url)), { kind: 'answered', status: 429, retryAfter: '120' });
  const big = await postToWebhook(deps, post(receiver.url));
  t.match(big, { kind: 'answered', status: 500 });
  t.equal(big.kind === 'answered' && big.snippet.length, 300, 'only the start of a long body is kept');
  t.match(await postToWebhook(deps, post(receiver.url)), { kind: 'answered', status: 302 });
  t.equal(receiver.requests.length, 4, 'the redirect was not followed');
});

t.test('a receiver streaming a body without end: the status decides at once, at most a snippet is read, the connection is closed', async (t) => {
  const { createServer } = await import('node:http');
  let bytesSent = 0;
  const closed: Promise<void>[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const status = req.headers['x-mp-inbound-attempt'] === '1' ? 200 : 500;
      res.writeHead(status, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x61);
      const pump = () => {
        while (!res.destroyed && res.write(chunk)) bytesSent += chunk.length;
      };
      res.on('drain', pump);
      closed.push(new Promise((resolve) => res.on('close', () => resolve())));
      pump();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  const deps = { dns: noDns, webhooks: local };

  t.match(await postToWebhook(deps, post(url, { attempt: 1 })), { kind: 'answered', status: 200, snippet: '' }, '2xx: delivered, the body is never read');
  const failed = await postToWebhook(deps, post(url, { attempt: 2 }));
  t.match(failed, { kind: 'answered', status: 500 }, '5xx: retried');
  t.equal(failed.kind === 'answered' && failed.snippet.length, 300, 'only 300 characters of it kept');
  await Promise.all(closed);
  t.pass('the receiver saw both connections closed: nothing keeps reading the endless bodies');
  t.ok(
    bytesSent < 64 * 1024 * 1024,
    `far less than the endless body was taken in (${bytesSent} bytes written by the receiver before its socket filled or closed)`,
  );
});

t.test('a receiver that does not answer in time is a timeout; a dropped connection and a closed port are errors', async (t) => {
  const receiver = await startWebhookReceiver(t);
  receiver.answerNext({ hang: true }, { drop: true });
  const deps = { dns: noDns, webhooks: local };
  t.match(await postToWebhook(deps, post(receiver.url)), { kind: 'failed', timedOut: true, error: 'no answer within 0.5 s' });
  t.equal(receiver.requests.length, 1, 'the hanging receiver did get the message');
  t.match(await postToWebhook(deps, post(receiver.url)), { kind: 'failed', timedOut: false, error: String });
  const closed = await freePort();
  t.match(await postToWebhook(deps, post(`http://127.0.0.1:${closed}/hook`)), { kind: 'failed', timedOut: false, error: /ECONNREFUSED/ });
});

t.test('the request goes to the address the policy checked: a name is resolved once, through our resolver, and pinned', async (t) => {
  const receiver = await startWebhookReceiver(t);
  const server = await startDnsServer(t);
  const dns = createResolver([server.address], { timeoutMs: 1000, tries: 1 });
  server.setA('hooks.acme.test', ['127.0.0.1']);
  // The system resolver has never heard of hooks.acme.test: reaching the receiver proves the pinned address was used.
  const result = await postToWebhook({ dns, webhooks: local }, post(`http://hooks.acme.test:${receiver.port}/hook`));
  t.match(result, { kind: 'answered', status: 200 });
  t.equal(receiver.requests[0]!.headers.host, `hooks.acme.test:${receiver.port}`, 'Host names the URL, not the address');
});

t.test('DNS rebinding: a host that passed the check at set-up but resolves to an internal address now is refused, nothing is sent', async (t) => {
  const receiver = await startWebhookReceiver(t);
  const server = await startDnsServer(t);
  const dns = createResolver([server.address], { timeoutMs: 1000, tries: 1 });
  const strictHttp = { ...local, allow_private_addresses: false };
  const url = `http://rebind.acme.test:${receiver.port}/hook`;
  server.setA('rebind.acme.test', ['93.184.216.34']);
  t.match(await checkWebhookUrl(url, strictHttp, dns), { address: '93.184.216.34' }, 'public when the tenant set it');
  for (const internal of [['127.0.0.1'], ['10.0.0.1'], ['::1'], ['::ffff:7f00:1'], ['93.184.216.34', '127.0.0.1']]) {
    server.setA('rebind.acme.test', internal);
    const result = await postToWebhook({ dns, webhooks: strictHttp }, post(url));
    t.match(
      result,
      { kind: 'refused', error: /^webhook_url host rebind\.acme\.test resolves to an? [a-z]+( \(IPv4 inside IPv6\))? address, which webhooks may not reach$/ },
      internal.join(','),
    );
    for (const address of internal) t.notOk(result.kind === 'refused' && result.error.includes(address), `the refusal does not name ${address}`);
  }
  t.equal(receiver.connections(), 0, 'no connection was ever made');
});

t.test('the policy applies at delivery too: http and literal internal addresses are refused under the shipped settings', async (t) => {
  const receiver = await startWebhookReceiver(t);
  t.match(await postToWebhook({ dns: noDns, webhooks: shipped }, post(receiver.url)), { kind: 'refused', error: 'webhook_url must be an https:// URL' });
  t.match(await postToWebhook({ dns: noDns, webhooks: { ...shipped, allow_http: true } }, post(receiver.url)), {
    kind: 'refused',
    error: /is the loopback address 127\.0\.0\.1/,
  });
  t.equal(receiver.connections(), 0);
});

t.test('misbehaving receivers: each POST ends within its deadline with an outcome, the connection is closed, and the process lives on', async (t) => {
  const deps = { dns: noDns, webhooks: local };
  const cases: [RogueHttpMode, number, Record<string, unknown>][] = [
    ['drip-head', 200, { kind: 'failed', timedOut: true, error: 'no answer within 0.5 s' }],
    // The status is what counts: a body dripping after a 2xx is never waited for, after a 5xx only up to the deadline.
    ['drip-body', 200, { kind: 'answered', status: 200, snippet: '' }],
    ['drip-body', 500, { kind: 'answered', status: 500, snippet: '' }],
    ['reset-mid-body', 500, { kind: 'answered', status: 500 }],
    ['endless-head', 200, { kind: 'failed', timedOut: false, error: /header/i }],
    ['endless-body', 200, { kind: 'answered', status: 200 }],
    ['garbage', 200, { kind: 'failed', timedOut: false, error: String }],
  ];
  for (const [mode, status, outcome] of cases) {
    const rogue = await startRogueHttp(t, mode, status);
    const result = await postToWebhook(deps, post(rogue.url));
    t.match(result, outcome, `${mode} ${status}: ${JSON.stringify(result)}`);
    await rogue.allClosed();
    t.equal(rogue.connections(), 1, `${mode} ${status}: one connection, closed by the client`);
  }
  const receiver = await startWebhookReceiver(t);
  t.match(await postToWebhook(deps, post(receiver.url)), { kind: 'answered', status: 200 }, 'a good receiver is still delivered to');
});
