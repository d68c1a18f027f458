// The dev sink and inbox on their own: any message is caught and listed with its envelope and verdicts, webhook POSTs are received and listed, one item is
// served raw, lists empty on DELETE, unknown paths are 404.
import t from 'tap';
import nodemailer from 'nodemailer';
import { startDevInbox } from '../../../main/dev/inbox.js';
import { startDevSink } from '../../../main/dev/sink.js';
import { DevStore, KEEP } from '../../../main/dev/store.js';
import { createResolver } from '../../../shared/kernel/dns.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { freePort, stopOnTeardown } from '../../helpers/net.js';

const log = createLogger('silent');
const store = new DevStore();
const dns = await startDnsServer(t);
const sink = stopOnTeardown(
  t,
  await startDevSink({ store, dns: createResolver([dns.address], { timeoutMs: 1000, tries: 1 }), hostname: 'mx.test.localhost', log }, await freePort()),
);
const inbox = stopOnTeardown(t, await startDevInbox({ store, log }, await freePort()));

const get = async (path: string) => {
  const res = await fetch(`${inbox.url}${path}`);
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
};
const listed = async (path: string) => JSON.parse((await get(path)).body.toString()) as Record<string, unknown>[];

t.test('the sink catches any message; the inbox lists it newest first and serves it raw', async (t) => {
  const transport = nodemailer.createTransport({ host: '127.0.0.1', port: sink.port, secure: false, ignoreTLS: true });
  t.teardown(() => transport.close());
  for (const subject of ['One', 'Two']) {
    const sent = await transport.sendMail({
      envelope: { from: 'bounce@x.localhost', to: ['a@example.org', 'b@example.org'] },
      from: 'Shop <shop@x.localhost>',
      to: 'a@example.org',
      subject,
      text: 'hi',
    });
    t.match(sent.response, /^250 Ok: caught as \d+$/);
  }
  const items = await listed('/messages');
  t.same(
    items.map((m) => m['subject']),
    ['Two', 'One'],
  );
  t.match(items[0], {
    mail_from: 'bounce@x.localhost',
    rcpt_to: ['a@example.org', 'b@example.org'],
    from: '"Shop" <shop@x.localhost>',
    to: 'a@example.org',
    dkim: 'none',
    raw_url: `${inbox.url}/messages/2`,
  });
  const raw = await get('/messages/2');
  t.equal(raw.type, 'message/rfc822');
  t.ok(raw.body.equals(store.messages[1]!.raw), 'the bytes the sink received');
  t.match(raw.body.toString(), /\r\nSubject: Two\r\n/);
  t.equal((await get('/messages/99')).status, 404);
});

t.test('the webhook receiver takes POSTs under /webhook and lists them with the X-MP and signature headers', async (t) => {
  const body = 'From: ann@example.org\r\nSubject: Inbound\r\n\r\nhello\r\n';
  const res = await fetch(`${inbox.url}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'message/rfc822', 'x-mp-inbound-recipient': 'support@x.localhost', 'x-mp-inbound-attempt': '1', 'x-other': 'not listed' },
    body,
  });
  t.equal(res.status, 200);
  t.same(await res.json(), { ok: true, id: 1 });
  t.equal((await fetch(`${inbox.url}/webhook/tenant-a`, { method: 'POST', body: '{}' })).status, 200, 'any path under /webhook');
  const posts = await listed('/webhooks');
  t.match(posts[1], {
    path: '/webhook',
    content_type: 'message/rfc822',
    from: 'ann@example.org',
    subject: 'Inbound',
    headers: { 'x-mp-inbound-recipient': 'support@x.localhost', 'x-mp-inbound-attempt': '1' },
  });
  t.notOk('x-other' in (posts[1]!['headers'] as object));
  t.match(posts[0], { path: '/webhook/tenant-a', subject: null });
  const signed = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1767225600', 'webhook-signature': 'v1,c2lnbmF0dXJl' };
  t.equal(
    (await fetch(`${inbox.url}/webhook/events`, { method: 'POST', headers: { 'content-type': 'application/json', ...signed }, body: '{"type":"open"}' }))
      .status,
    200,
  );
  t.same((await listed('/webhooks'))[0]!['headers'], signed, "an event webhook's Standard Webhooks signature headers are listed");
  t.equal((await get('/webhooks/1')).body.toString(), body);

  t.equal((await fetch(`${inbox.url}/webhooks`, { method: 'DELETE' })).status, 200);
  t.same(await listed('/webhooks'), []);
  t.equal((await fetch(`${inbox.url}/messages`, { method: 'DELETE' })).status, 200);
  t.same(await listed('/messages'), []);
  t.equal((await get('/nowhere')).status, 404);
  t.match(JSON.parse((await get('/')).body.toString()), { messages: `${inbox.url}/messages`, webhook_url: `${inbox.url}/webhook` });
});

t.test('the store keeps the newest messages; caught_total counts every one since the start', async (t) => {
  const own = new DevStore();
  const message = {
    received_at: new Date(),
    mail_from: 'a@b.test',
    rcpt_to: ['c@d.test'],
    raw: Buffer.from('x'),
    dkim: 'none',
    dmarc: 'none',
    from: null,
    to: null,
    subject: null,
    message_id: null,
  };
  for (let i = 0; i < KEEP + 5; i++) own.addMessage(message);
  t.equal(own.messages.length, KEEP, 'bounded');
  t.equal(own.messages[0]!.id, 6, 'the oldest dropped first');
  t.equal(own.caughtTotal, KEEP + 5);
  const listing = JSON.parse((await get('/')).body.toString());
  t.equal(listing.caught_total, store.caughtTotal, 'GET / shows it');
  t.ok(listing.caught_total >= 1);
});
