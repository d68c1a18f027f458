// The inbound path end to end through a real `mailpath start` (api, mx, outbound): SMTP into the MX → signed POSTs at a real webhook receiver (and a dead
// letter replayed), a workspace mailbox read through /mail/messages; a DSN and an ARF report for delivered sends → bounce and complaint.
import t from 'tap';
import { createHmac, randomBytes } from 'node:crypto';
import nodemailer from 'nodemailer';
import postgres from 'postgres';
import { createTestDatabase } from '../../helpers/db.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { publishRecords, recordOf, type ApiRecord } from '../../helpers/domains.js';
import { https, startMailpathProcess, type HttpsAnswer } from '../../helpers/mailpath-process.js';
import { RawSmtpClient } from '../../helpers/smtp-client.js';
import { pollUntil, startSmtpSink } from '../../helpers/smtp-sink.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';
import { fixture } from '../../shared/delivery/bounces/fixtures.js';

const HOST = 'mx.e2e.test';
const DOMAIN = 'acme-e2e.test';
const MANY = '1000000';

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 2, onnotice: () => {} });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});
const dns = await startDnsServer(t);
const receiver = await startWebhookReceiver(t);
// The outbound relay: where the tenant's sends are delivered, so they are out (delivered) before they bounce.
const relay = await startSmtpSink(t);

const proc = await startMailpathProcess({
  DATABASE_URL: db.url,
  MAILPATH_ROLES: 'api,mx,outbound',
  MAILPATH_HOSTNAME: HOST,
  MAILPATH_MASTER_KEY: randomBytes(32).toString('hex'),
  MAILPATH_JWT_SECRET: randomBytes(32).toString('hex'),
  MAILPATH_DNS_SERVERS: dns.address,
  MAILPATH_CONFIG__DNS__TIMEOUT_MS: '300',
  MAILPATH_CONFIG__DNS__TRIES: '1',
  MAILPATH_OUTBOUND_RELAY: relay.address,
  // The receiver is plain HTTP on loopback: allowed here only (the shipped policy refuses both).
  MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true',
  MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true',
  MAILPATH_CONFIG__WEBHOOKS__WORKERS__POLL_INTERVAL_MS: '500',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: MANY,
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: MANY,
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__SEND: MANY,
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__PUBLIC: MANY,
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__TENANT_DEFAULT_PER_SEC: MANY,
});
t.teardown(() => proc.stop());

const api = (method: string, path: string, options: { token?: string; body?: unknown } = {}): Promise<HttpsAnswer> =>
  https(proc.httpsPort, method, path, options);
const ok = (res: HttpsAnswer, status: number, what: string) => {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}\n${proc.output()}`);
  return res.body.data;
};
const sign = (body: Buffer, secret: string) => `hmac-sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/** One SMTP transaction with the null sender (as bounces and reports come), over a fresh connection; the reply to the end of DATA. */
async function sendRaw(to: string, raw: Buffer, from = ''): Promise<{ rcpt: number; done: number; text: string }> {
  const { client } = await RawSmtpClient.open(proc.mxPort);
  try {
    await client.command('EHLO mta.remote.example');
    await client.command(`MAIL FROM:<${from}>`);
    const rcpt = await client.command(`RCPT TO:<${to}>`);
    if (rcpt.code !== 250) return { rcpt: rcpt.code, done: 0, text: rcpt.text };
    await client.command('DATA');
    // Dot-stuffing (RFC 5321 §4.5.2), the body ending in CRLF before the final dot.
    const text = raw
      .toString('utf8')
      .replace(/\r\n\./g, '\r\n..')
      .replace(/^\./, '..');
    const done = await client.command(`${text.endsWith('\r\n') ? text : `${text}\r\n`}.`);
    return { rcpt: rcpt.code, done: done.code, text: done.text };
  } finally {
    await client.quit();
  }
}

// The tenant sets up as a customer would: account, domain published in DNS and verified (MX included), webhook, mailbox.
const owner = ok(
  await api('POST', '/auth/register', { body: { tenant_name: 'Acme', tenant_slug: 'acme-e2e', email: 'owner@acme-owner.test', password: 'Correct-horse-42' } }),
  201,
  'register',
);
const token: string = owner.token;
const tenantId: string = owner.tenant_id;
const domain = ok(await api('POST', '/domains', { token, body: { name: DOMAIN } }), 201, 'add domain');
publishRecords(dns, domain.records as ApiRecord[]);
const verified = ok(await api('POST', `/domains/${domain.id}/verify`, { token }), 200, 'verify domain');
const webhook = ok(await api('PATCH', '/settings/inbound-webhook', { token, body: { webhook_url: receiver.url, enabled: true } }), 200, 'webhook');
const mailbox = ok(await api('POST', '/mail/mailboxes', { token, body: { address: `support@${DOMAIN}`, display_name: 'Support' } }), 201, 'mailbox');
const invite = ok(await api('POST', `/mail/mailboxes/${mailbox.id}/invite`, { token }), 201, 'invite');
const session = ok(await api('POST', '/auth/mail/invite/consume', { body: { token: invite.token, new_password: 'Mailbox-pass-42' } }), 200, 'consume');

t.test('set-up through the API: the domain is sendable and its MX verified, the secret was shown once', async (t) => {
  t.equal(verified.can_send, true);
  t.equal(recordOf(verified.records, 'mx').verified, true, 'MX points at us');
  t.match(webhook, { webhook_url: receiver.url, enabled: true, secret: /^whsec_/, secret_revealed_once: true });
  const read = ok(await api('GET', '/settings/inbound-webhook', { token }), 200, 'read webhook');
  t.match(read, { secret: null, secret_revealed_once: false });
  t.match(session, { mailbox_id: mailbox.id, address: `support@${DOMAIN}`, tenant_id: tenantId });
});

t.test('SMTP → MX → one signed POST per tenant recipient at a real receiver, and the mailbox copy through /mail/messages', async (t) => {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: proc.mxPort,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    connectionTimeout: 5000,
    socketTimeout: 15000,
  });
  const info = await transport.sendMail({
    from: 'Ann Sender <ann@sender.example>',
    to: `support@${DOMAIN}`,
    cc: `sales@${DOMAIN}`,
    subject: 'Order 1234 arrived damaged',
    text: 'The box was crushed.\nPhotos attached.',
    html: '<p>The box was <b>crushed</b>.</p>',
    attachments: [{ filename: 'photo.txt', content: 'not really a photo' }],
  });
  transport.close();
  const id = /^250 2\.0\.0 Ok: queued as ([0-9a-f-]{36})$/.exec(info.response)?.[1];
  t.ok(id, `250 names the stored message: ${info.response}`);

  // The webhook: two POSTs (two envelope recipients at the tenant's domain), the same bytes, each signed.
  const requests = await pollUntil('two webhook POSTs', () => (receiver.requests.length >= 2 ? receiver.requests.slice() : undefined), 20_000);
  t.equal(requests.length, 2, 'one POST per tenant recipient, no more');
  t.same(requests.map((r) => r.headers['x-mp-inbound-recipient']).sort(), [`sales@${DOMAIN}`, `support@${DOMAIN}`]);
  for (const req of requests) {
    t.equal(req.method, 'POST');
    t.equal(req.headers['content-type'], 'message/rfc822');
    t.equal(req.headers['x-mp-inbound-sig'], sign(req.body, webhook.secret), 'the receiver recomputes the HMAC over the bytes it got: it matches');
    t.equal(req.headers['x-mp-inbound-tenant'], tenantId);
    t.equal(req.headers['x-mp-inbound-attempt'], '1');
  }
  t.ok(requests[0]!.body.equals(requests[1]!.body), 'both carry the same stored message');
  const body = requests[0]!.body.toString('utf8');
  t.match(
    body,
    new RegExp(`^Received: from \\S+ \\(\\[127\\.0\\.0\\.1\\]\\)\\r\\n\\tby ${HOST.replace(/\./g, '\\.')} \\(Mailpath\\) with ESMTPS id ${id}`),
    'our Received header first, naming the stored id',
  );
  t.match(body, new RegExp(`\\r\\nAuthentication-Results: ${HOST.replace(/\./g, '\\.')};`), 'then our Authentication-Results');
  t.match(body, /\r\nSubject: Order 1234 arrived damaged\r\n/, "then the sender's message");
  const deliveries = await pollUntil('both deliveries recorded as delivered', async () => {
    const rows = await sql<
      { status: string; attempts: number; last_status: number }[]
    >`select status, attempts, last_status from inbound_webhook_deliveries where tenant_id = ${tenantId}`;
    return rows.length === 2 && rows.every((r) => r.status === 'delivered') ? rows : undefined;
  });
  t.match(deliveries, [
    { attempts: 1, last_status: 200 },
    { attempts: 1, last_status: 200 },
  ]);

  // The mailbox: only support@ has one; its reader sees the message through the API with the mailbox session.
  const list = await api('GET', '/mail/messages?unread=true', { token: session.token });
  t.equal(list.status, 200);
  t.equal(list.body.total, 1);
  const item = list.body.data[0];
  t.match(item, {
    mailbox_id: mailbox.id,
    from: 'Ann Sender <ann@sender.example>',
    subject: 'Order 1234 arrived damaged',
    seen: false,
    size_bytes: requests[0]!.body.length,
  });
  const message = ok(await api('GET', `/mail/messages/${item.id}`, { token: session.token }), 200, 'read message');
  t.match(message, {
    from: [{ name: 'Ann Sender', address: 'ann@sender.example' }],
    to: [{ address: `support@${DOMAIN}` }],
    cc: [{ address: `sales@${DOMAIN}` }],
    text: /The box was crushed\.\r?\nPhotos attached\./,
    html: '<p>The box was <b>crushed</b>.</p>',
    attachments: [{ filename: 'photo.txt', size: 18 }],
    envelope: { mail_from: 'ann@sender.example', rcpt_to: `support@${DOMAIN}` },
    body_parsed: true,
  });
  t.match(message.authentication_results[0], new RegExp(`^${HOST.replace(/\./g, '\\.')};`), "Mailpath's Authentication-Results first");
  const raw = await api('GET', `/mail/messages/${item.id}/raw`, { token: session.token });
  t.equal(raw.status, 200);
  t.match(raw.headers['content-type'], /^message\/rfc822/);
  t.equal(raw.body, body, 'the raw download is the very bytes the webhook got');
  ok(await api('PATCH', `/mail/messages/${item.id}`, { token: session.token, body: { seen: true } }), 200, 'mark read');
  t.equal((await api('GET', '/mail/messages?unread=true', { token: session.token })).body.total, 0, 'no unread message left');
  t.equal((await api('GET', '/mail/messages?q=damaged', { token: session.token })).body.total, 1, 'found by subject');
  t.equal((await api('GET', `/mail/messages?mailbox_id=${mailbox.id}`, { token })).body.total, 1, 'the tenant owner sees it too');
  t.equal((await api('GET', '/domains', { token: session.token })).status, 403, 'the mailbox session reaches nothing else');
});

t.test('a receiver answering 400 dead-letters at once; the super-admin lists the dead letter and replays it, and it is delivered', async (t) => {
  const before = receiver.requests.length;
  receiver.answerNext({ status: 400, body: 'unknown recipient' });
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: proc.mxPort,
    secure: false,
    ignoreTLS: true,
    connectionTimeout: 5000,
    socketTimeout: 15000,
  });
  await transport.sendMail({ from: 'bob@sender.example', to: `nobody@${DOMAIN}`, subject: 'will bounce off the webhook', text: 'x' });
  transport.close();
  await pollUntil('the 400 POST', () => (receiver.requests.length > before ? true : undefined), 20_000);

  const admin = ok(await api('POST', '/auth/login', { body: { email: 'admin@mailpath.local', password: 'Root-password-123' } }), 200, 'admin login');
  const dlq = await pollUntil('the dead letter', async () => {
    const res = await api('GET', `/admin/tenants/${tenantId}/inbound-webhook-dlq`, { token: admin.token });
    return res.body.data?.length ? res.body : undefined;
  });
  t.equal(dlq.total, 1);
  t.match(dlq.data[0], {
    recipient: `nobody@${DOMAIN}`,
    attempts: 1,
    last_status: 400,
    last_error: /^HTTP 400: unknown recipient/,
    dead_at: String,
    created_at: String,
  });
  t.equal(receiver.requests.length, before + 1, 'no retry after a 4xx');
  t.equal((await api('GET', `/admin/tenants/${tenantId}/inbound-webhook-dlq`, { token })).status, 403, 'the tenant itself may not read it');

  ok(await api('POST', `/admin/tenants/${tenantId}/inbound-webhook-dlq/${dlq.data[0].id}/replay`, { token: admin.token }), 200, 'replay');
  const again = await pollUntil(
    'the replayed POST',
    () => receiver.requests.slice(before + 1).find((r) => r.headers['x-mp-inbound-delivery'] === dlq.data[0].id),
    20_000,
  );
  t.equal(again.headers['x-mp-inbound-sig'], sign(again.body, webhook.secret));
  t.equal(again.headers['x-mp-inbound-attempt'], '1', 'a replay starts a fresh schedule');
  await pollUntil('the dead-letter queue to be empty', async () =>
    (await api('GET', `/admin/tenants/${tenantId}/inbound-webhook-dlq`, { token: admin.token })).body.total === 0 ? true : undefined,
  );
  t.pass('delivered on replay');
});

/** A live send from the tenant, delivered to the relay; its VERP envelope sender and Message-ID as the receiving side saw them. */
async function deliveredSend(to: string): Promise<{ id: string; verp: string; messageId: string }> {
  const accepted = ok(
    await api('POST', '/transactional/send', { token, body: { to, from_email: `news@${DOMAIN}`, subject: 'Your order', body_text: 'Shipped.' } }),
    202,
    'send',
  );
  const arrived = await pollUntil(`the send to ${to} at the relay`, () => relay.messages.find((m) => m.to.includes(to)), 20_000);
  await pollUntil(`send ${accepted.message_id} delivered`, async () => {
    const res = await api('GET', `/sends/${accepted.message_id}`, { token });
    return res.body.data?.status === 'delivered' ? true : undefined;
  });
  const messageId = /^Message-ID:\s*<([^>]+)>/im.exec(arrived.raw.toString('utf8'))?.[1];
  if (!messageId) throw new Error('the delivered message has no Message-ID');
  return { id: accepted.message_id, verp: arrived.from, messageId };
}

t.test('a DSN mailed by the remote side to the VERP address of a delivered send: MX → intake → hard bounce and suppression', async (t) => {
  const send = await deliveredSend('gone@dest.example');
  t.match(send.verp, new RegExp(`^b-.+@${HOST.replace(/\./g, '\\.')}$`), `the send went out with a VERP envelope sender (${send.verp})`);

  const forged = await sendRaw(send.verp.replace(/-([^-@]+)@/, '-forged@'), Buffer.from('Subject: x\r\n\r\nx\r\n'));
  t.equal(forged.rcpt, 550, 'a VERP address with a wrong signature is not ours');

  const dsn = fixture('dsn-gmail-5.1.1.eml', { VERP: send.verp, MESSAGE_ID: send.messageId, RECIPIENT: 'gone@dest.example', FBL: `fbl@${HOST}` });
  const stored = await sendRaw(send.verp, dsn);
  t.equal(stored.done, 250, `the MX took the DSN (${stored.text})`);

  const bounced = await pollUntil(
    'the send to be bounced',
    async () => {
      const res = await api('GET', `/sends/${send.id}`, { token });
      return res.body.data?.status === 'bounced' ? res.body.data : undefined;
    },
    20_000,
  );
  t.ok(
    bounced.events.some((e: { type: string; subtype: string | null }) => e.type === 'bounce' && e.subtype === 'hard'),
    'the send shows its hard bounce',
  );
  const events = await api('GET', `/events?type=bounce&message_id=${send.id}`, { token });
  t.equal(events.body.data.length, 1, 'one bounce event');
  t.match(events.body.data[0], {
    type: 'bounce',
    subtype: 'hard',
    recipient: 'gone@dest.example',
    detail: { source: 'dsn', enhanced_code: '5.1.1', mapped_by: 'verp' },
  });
  const suppressions = await api('GET', '/suppressions?q=gone@dest.example', { token });
  t.match(suppressions.body.data, [{ email: 'gone@dest.example', reason: 'hard_bounce' }], 'suppressed');
});

t.test('an ARF report mailed to the feedback-loop address about a delivered send: MX → intake → complaint and suppression', async (t) => {
  const send = await deliveredSend('annoyed@dest.example');
  const report = fixture('arf-yahoo.eml', { VERP: send.verp, MESSAGE_ID: send.messageId, RECIPIENT: 'annoyed@dest.example', FBL: `fbl@${HOST}` });
  const stored = await sendRaw(`fbl@${HOST}`, report, 'feedback@yahoo.example');
  t.equal(stored.done, 250, `the MX took the report (${stored.text})`);
  const complaint = await pollUntil(
    'the complaint event',
    async () => {
      const res = await api('GET', `/events?type=complaint&message_id=${send.id}`, { token });
      return res.body.data?.length ? res.body.data : undefined;
    },
    20_000,
  );
  t.match(complaint, [{ type: 'complaint', recipient: 'annoyed@dest.example' }]);
  const suppressions = await api('GET', '/suppressions?q=annoyed@dest.example', { token });
  t.match(suppressions.body.data, [{ email: 'annoyed@dest.example', reason: 'complaint' }]);
  t.notOk(
    receiver.requests.some((r) => String(r.headers['x-mp-inbound-recipient']).endsWith(`@${HOST}`)),
    'bounce mail is never POSTed to the tenant webhook',
  );
});
