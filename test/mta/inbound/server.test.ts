// The MX server end to end on loopback: EHLO extensions, STARTTLS, pipelining, SMTPUTF8, what a stored message looks like, and the replies of each refusal.
import t from 'tap';
import nodemailer from 'nodemailer';
import { RawSmtpClient } from '../../helpers/smtp-client.js';
import { MX_HOST, NOTHING_STORED, message, startTestMx, storedCounts, tenantDomain } from './fixtures.js';

const { port, sql } = await startTestMx(t, {
  env: { MAILPATH_CONFIG__INBOUND__LIMITS__MAX_MESSAGE_BYTES: '4096', MAILPATH_CONFIG__INBOUND__LIMITS__MAX_RECIPIENTS: '3' },
});
const acme = await tenantDomain(sql, { mailboxes: ['ann'] });

/** One SMTP transaction over a fresh connection: EHLO, MAIL, RCPTs, DATA; returns every reply. */
async function transaction(from: string, to: string[], data: string, options: { tls?: boolean; mailParams?: string; port?: number } = {}) {
  const { client } = await RawSmtpClient.open(options.port ?? port);
  try {
    const replies = [await client.command('EHLO client.example')];
    if (options.tls) {
      replies.push(await client.startTls());
      replies.push(await client.command('EHLO client.example'));
    }
    replies.push(await client.command(`MAIL FROM:<${from}>${options.mailParams ? ` ${options.mailParams}` : ''}`));
    for (const rcpt of to) replies.push(await client.command(`RCPT TO:<${rcpt}>`));
    replies.push(await client.command('DATA'));
    if (replies[replies.length - 1]!.code === 354) replies.push(await client.command(`${data}.`));
    return replies;
  } finally {
    await client.quit();
  }
}

t.test('the greeting and EHLO: SIZE with the limit, 8BITMIME, SMTPUTF8, PIPELINING, STARTTLS, and no AUTH', async (t) => {
  const { client, greeting } = await RawSmtpClient.open(port);
  t.equal(greeting.code, 220);
  t.match(greeting.text, new RegExp(`^${MX_HOST} ESMTP`));
  const ehlo = await client.command('EHLO client.example');
  t.equal(ehlo.code, 250);
  const extensions = ehlo.text.split('\n').slice(1);
  for (const ext of ['SIZE 4096', '8BITMIME', 'SMTPUTF8', 'PIPELINING', 'STARTTLS']) t.ok(extensions.includes(ext), `advertises ${ext}`);
  t.notOk(
    extensions.some((e) => e.startsWith('AUTH')),
    'no AUTH on an MX',
  );
  const auth = await client.command(`AUTH PLAIN ${Buffer.from('\0u\0p').toString('base64')}`);
  t.ok(auth.code >= 500, `AUTH is refused (${auth.code})`);
  await client.quit();
});

t.test('a message to a tenant address is stored with our Received and Authentication-Results headers above the client bytes', async (t) => {
  const body = message(
    { From: 'Ann Sender <ann@sender.example>', To: `hello@${acme.name}`, Subject: '=?UTF-8?B?SMOpbGxv?= there', 'Message-ID': '<m1@sender.example>' },
    'Line one.\r\n..dot-stuffed line\r\n',
  );
  const replies = await transaction('ann@sender.example', [`hello@${acme.name}`], body);
  const last = replies[replies.length - 1]!;
  t.equal(last.code, 250);
  const id = /^2\.0\.0 Ok: queued as ([0-9a-f-]{36})$/.exec(last.text)?.[1];
  t.ok(id, `the 250 names the stored message (${last.text})`);
  const [row] = await sql<
    {
      raw: Buffer;
      mail_from: string;
      helo: string;
      tls: boolean;
      remote_address: string;
      size_bytes: number;
      header_message_id: string;
      header_from: string;
      subject: string;
      authentication_results: string;
    }[]
  >`
    select * from inbound_messages where id = ${id!}`;
  t.ok(row, 'stored under the id the reply named');
  const raw = row!.raw.toString('utf8');
  t.match(
    raw,
    new RegExp(
      `^Received: from client\\.example \\(\\[127\\.0\\.0\\.1\\]\\)\\r\\n\\tby ${MX_HOST.replace(/\./g, '\\.')} \\(Mailpath\\) with ESMTP id ` +
        `${id}\\r\\n\\tfor <hello@${acme.name.replace(/\./g, '\\.')}>;\\r\\n\\t\\w{3}, \\d{2} \\w{3} \\d{4} [\\d:]{8} \\+0000\\r\\n`,
    ),
  );
  const afterReceived = raw.slice(raw.indexOf('\r\nAuthentication-Results:') + 2);
  t.match(afterReceived, new RegExp(`^Authentication-Results: ${MX_HOST.replace(/\./g, '\\.')};\\r\\n`), 'Authentication-Results comes right after Received');
  t.ok(raw.endsWith(body.replace('..dot', '.dot')), 'then the client bytes, dot-unstuffed, unchanged');
  t.match(row, { mail_from: 'ann@sender.example', helo: 'client.example', tls: false, remote_address: '127.0.0.1', size_bytes: row!.raw.length });
  t.same([row!.header_message_id, row!.header_from, row!.subject], ['m1@sender.example', 'Ann Sender <ann@sender.example>', 'Héllo there']);
  t.match(row!.authentication_results, new RegExp(`^${MX_HOST.replace(/\./g, '\\.')}; .*spf=`));

  const recipients = await sql<
    { id: string; recipient: string; kind: string; tenant_id: string }[]
  >`select * from inbound_recipients where message_id = ${id!}`;
  t.match(recipients, [{ recipient: `hello@${acme.name}`, kind: 'tenant', tenant_id: acme.tenantId }]);
  const deliveries = await sql<{ id: string; status: string; tenant_id: string; attempts: number; next_attempt_at: Date; created_at: Date }[]>`
    select * from inbound_webhook_deliveries where inbound_recipient_id = ${recipients[0]!.id}`;
  t.match(deliveries, [{ status: 'pending', tenant_id: acme.tenantId, attempts: 0 }]);
  t.same(deliveries[0]!.next_attempt_at, deliveries[0]!.created_at, 'due in the outbox from the moment it is stored');
});

t.test('STARTTLS: the session goes on encrypted, STARTTLS is no longer offered, and the message is stored as received over TLS', async (t) => {
  const replies = await transaction('tls@sender.example', [`ann@${acme.name}`], message({ From: 'tls@sender.example', Subject: 'over TLS' }), { tls: true });
  t.equal(replies[1]!.code, 220, 'STARTTLS answered 220');
  t.notOk(replies[2]!.text.split('\n').includes('STARTTLS'), 'not offered again once encrypted');
  t.equal(replies[replies.length - 1]!.code, 250);
  const [row] = await sql<{ tls: boolean; raw: Buffer; id: string }[]>`select id, tls, raw from inbound_messages where mail_from = 'tls@sender.example'`;
  t.equal(row!.tls, true);
  t.match(row!.raw.toString(), /with ESMTPS id/);
  const copies = await sql`select * from mailbox_messages where inbound_message_id = ${row!.id}`;
  t.match(
    copies,
    [{ mailbox_id: acme.mailboxIds['ann'], tenant_id: acme.tenantId, recipient: `ann@${acme.name}`, subject: 'over TLS', seen: false }],
    'a mailbox recipient gets its copy',
  );
});

t.test('nodemailer over STARTTLS with two recipients: one message, two recipient rows', async (t) => {
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    connectionTimeout: 5000,
    socketTimeout: 10000,
  });
  const info = await transport.sendMail({ from: 'nm@sender.example', to: [`ann@${acme.name}`, `other@${acme.name}`], subject: 'Two', text: 'Hi both' });
  transport.close();
  t.match(info.response, /^250 2\.0\.0 Ok: queued as /);
  const [row] = await sql<{ id: string; raw: Buffer }[]>`select id, raw from inbound_messages where mail_from = 'nm@sender.example'`;
  t.notMatch(row!.raw.toString().split('\r\n\r\n')[0], /\tfor </, 'with several recipients the Received header names none (no Bcc leak)');
  const recipients = await sql<{ recipient: string }[]>`select recipient from inbound_recipients where message_id = ${row!.id} order by recipient`;
  t.same(
    recipients.map((r) => r.recipient),
    [`ann@${acme.name}`, `other@${acme.name}`],
  );
});

t.test('PIPELINING: the commands of a transaction sent at once are answered in order', async (t) => {
  const { client } = await RawSmtpClient.open(port);
  await client.command('EHLO client.example');
  client.write(`MAIL FROM:<pipe@sender.example>\r\nRCPT TO:<ann@${acme.name}>\r\nRCPT TO:<x@elsewhere.example>\r\nDATA\r\n`);
  const replies = [await client.read(), await client.read(), await client.read(), await client.read()];
  t.same(
    replies.map((r) => r.code),
    [250, 250, 550, 354],
  );
  const done = await client.command(`${message({ Subject: 'pipelined' })}.`);
  t.equal(done.code, 250);
  await client.quit();
});

t.test('SMTPUTF8: a UTF-8 sender and recipient are accepted and the Received header says UTF8SMTP', async (t) => {
  const replies = await transaction('jöran@sender.example', [`jürgen@${acme.name}`], message({ From: 'jöran@sender.example', Subject: 'Grüße' }), {
    mailParams: 'SMTPUTF8 BODY=8BITMIME',
  });
  t.equal(replies[replies.length - 1]!.code, 250, replies.map((r) => `${r.code} ${r.text}`).join(' | '));
  const [row] = await sql<
    { raw: Buffer; subject: string; id: string }[]
  >`select id, raw, subject from inbound_messages where mail_from = 'jöran@sender.example'`;
  t.match(row!.raw.toString('utf8'), /with UTF8SMTP id .*\r\n\tfor <jürgen@/);
  t.equal(row!.subject, 'Grüße', '8-bit header bytes kept as UTF-8');
});

t.test('over-size: SIZE= above the limit is refused at MAIL, and DATA running over it at the end of DATA (552 5.3.4); nothing stored', async (t) => {
  const before = await storedCounts(sql);
  const { client } = await RawSmtpClient.open(port);
  await client.command('EHLO client.example');
  const declared = await client.command('MAIL FROM:<big@sender.example> SIZE=5000');
  t.equal(declared.code, 552);
  t.match(declared.text, /^5\.3\.4 message exceeds the fixed maximum message size of 4096 bytes/);
  t.equal((await client.command('MAIL FROM:<big@sender.example> SIZE=100')).code, 250, 'a declared size within the limit is fine');
  t.equal((await client.command(`RCPT TO:<ann@${acme.name}>`)).code, 250);
  t.equal((await client.command('DATA')).code, 354);
  const over = await client.command(`${message({ Subject: 'lies about its size' }, `${'x'.repeat(76)}\r\n`.repeat(80))}.`);
  t.equal(over.code, 552);
  t.match(over.text, /^5\.3\.4 /);
  // The session is still usable: the next transaction goes through.
  t.equal((await client.command('MAIL FROM:<small@sender.example>')).code, 250);
  t.equal((await client.command(`RCPT TO:<ann@${acme.name}>`)).code, 250);
  t.equal((await client.command('DATA')).code, 354);
  t.equal((await client.command(`${message({ Subject: 'small' })}.`)).code, 250);
  await client.quit();
  const after = await storedCounts(sql);
  t.equal(after['inbound_messages'], before['inbound_messages']! + 1, 'only the small message was stored');
});

t.test('too many recipients: past the maximum RCPT is answered 452 4.5.3; a repeated address does not count', async (t) => {
  const { client } = await RawSmtpClient.open(port);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<many@sender.example>');
  const codes = [];
  for (const local of ['a', 'b', 'A', 'c', 'd']) codes.push(await client.command(`RCPT TO:<${local}@${acme.name}>`));
  t.same(
    codes.map((r) => r.code),
    [250, 250, 250, 250, 452],
  );
  t.match(codes[4]!.text, /^4\.5\.3 too many recipients: at most 3 per message/);
  t.equal((await client.command('DATA')).code, 354);
  t.equal((await client.command(`${message({ Subject: 'three' })}.`)).code, 250);
  await client.quit();
  const recipients = await sql<{ recipient: string }[]>`
    select r.recipient from inbound_recipients r join inbound_messages m on m.id = r.message_id where m.mail_from = 'many@sender.example' order by 1`;
  t.same(
    recipients.map((r) => r.recipient),
    [`A@${acme.name}`, `b@${acme.name}`, `c@${acme.name}`],
    'the later spelling of a repeated address wins',
  );
});

t.test('a transaction without an accepted recipient cannot send DATA, and a refused MAIL leaves no transaction', async (t) => {
  const { client } = await RawSmtpClient.open(port);
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<none@sender.example>');
  t.equal((await client.command('RCPT TO:<x@foreign.example>')).code, 550);
  t.equal((await client.command('DATA')).code, 503);
  await client.quit();
  t.equal((await sql`select 1 from inbound_messages where mail_from = 'none@sender.example'`).length, 0);
});

t.test('refused transactions store nothing (on an MX of their own, so every table must stay empty)', async (t) => {
  const fresh = await startTestMx(t);
  await tenantDomain(fresh.sql, { name: 'unverified.example', mxVerified: false });
  const replies = await transaction('x@sender.example', ['x@foreign.example', 'y@unverified.example'], message({ Subject: 'x' }), { port: fresh.port });
  t.same(
    replies.slice(2, 4).map((r) => r.code),
    [550, 550],
  );
  t.equal(replies[replies.length - 1]!.code, 503);
  t.same(await storedCounts(fresh.sql), NOTHING_STORED);
});
