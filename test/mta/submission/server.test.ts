// SMTP submission end to end on loopback: both ports, AUTH with API keys, the From check, header fixes, one send per recipient.
import t from 'tap';
import { execFile } from 'node:child_process';
import nodemailer from 'nodemailer';
import { startSubmission } from '../../../mta/submission/server.js';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { stopOnTeardown } from '../../helpers/net.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { RawSmtpClient } from '../../helpers/smtp-client.js';

const { app, ctx, sql } = await buildTestApp(t, {
  env: { MAILPATH_SUBMISSION_PORT: '0', MAILPATH_SUBMISSION_TLS_PORT: '0', MAILPATH_BIND_HOST: '127.0.0.1', MAILPATH_CONFIG__AUTH__CREDENTIAL_CACHE_MS: '0' },
});
const submission = stopOnTeardown(t, await startSubmission(ctx));
const { starttls, implicitTls } = submission.ports;

/** A tenant with a verified sending domain and a key (live, all scopes unless told). */
async function sender(key: Record<string, unknown> = {}, withDomain = true) {
  const tenant = await registerTenant(app);
  const domain = withDomain ? await verifiedSendingDomain(sql, ctx.vault, tenant.tenantId) : undefined;
  const { key: secret, id } = await createKey(app, tenant, key);
  return { tenant, domain: domain?.name ?? 'nowhere.example', key: secret, keyId: id };
}

type Mail = Parameters<ReturnType<typeof nodemailer.createTransport>['sendMail']>[0];

async function send(key: string, mail: Mail, options: { port?: number; authMethod?: string } = {}) {
  const port = options.port ?? starttls;
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port,
    secure: port === implicitTls,
    requireTLS: port !== implicitTls,
    tls: { rejectUnauthorized: false },
    auth: { user: 'anything', pass: key },
    ...(options.authMethod ? { authMethod: options.authMethod } : {}),
    connectionTimeout: 5000,
    greetingTimeout: 5000,
    socketTimeout: 10000,
  });
  try {
    return await transport.sendMail(mail);
  } finally {
    transport.close();
  }
}

interface SendRecord {
  id: string;
  source: string;
  status: string;
  mode: string;
  api_key_id: string;
  from_email: string;
  to_email: string;
  subject: string;
  message_id: string;
  message: Buffer | null;
}
const sendsOf = (tenantId: string) =>
  sql<
    SendRecord[]
  >`select id, source, status, mode, api_key_id, from_email, to_email, subject, message_id, message from sends where tenant_id = ${tenantId} order by to_email`;
const jobsFor = async (sendId: string) => (await sql<{ n: number }[]>`select count(*)::int as n from delivery_queue where send_id = ${sendId}`)[0]!.n;

t.test('the STARTTLS port (AUTH PLAIN) and the implicit TLS port (AUTH LOGIN) both store a signed, queued send', async (t) => {
  const s = await sender();
  const first = await send(s.key, { from: `News <news@${s.domain}>`, to: 'rcpt@dest.example', subject: 'Over STARTTLS', text: 'hello' });
  t.match(first.response, /^250 2\.0\.0 Ok: queued as </);
  await send(s.key, { from: `news@${s.domain}`, to: 'other@dest.example', subject: 'Over TLS', text: 'hi' }, { port: implicitTls, authMethod: 'LOGIN' });
  const rows = await sendsOf(s.tenant.tenantId);
  t.equal(rows.length, 2);
  for (const row of rows) {
    t.match(row, { source: 'smtp', status: 'queued', mode: 'live', api_key_id: s.keyId, from_email: `news@${s.domain}` });
    t.match(row.message!.toString(), new RegExp(`^DKIM-Signature: [^]*d=${s.domain.replace(/\./g, '\\.')};`));
    t.equal(await jobsFor(row.id), 1, 'one delivery job');
  }
  t.same(
    rows.map((r) => [r.to_email, r.subject]),
    [
      ['other@dest.example', 'Over TLS'],
      ['rcpt@dest.example', 'Over STARTTLS'],
    ],
  );
  // The key's use is recorded for rotation (last_used_at), batched shortly after AUTH.
  for (let i = 0; i < 50; i++) {
    const [key] = await sql<{ last_used_at: Date | null }[]>`select last_used_at from api_keys where id = ${s.keyId}`;
    if (key!.last_used_at) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.ok((await sql<{ last_used_at: Date | null }[]>`select last_used_at from api_keys where id = ${s.keyId}`)[0]!.last_used_at);
});

t.test('EHLO advertises the extensions; AUTH waits for STARTTLS; MAIL without AUTH is 530', async (t) => {
  const { client, greeting } = await RawSmtpClient.open(starttls);
  t.teardown(() => client.destroy());
  t.match(greeting, { code: 220, text: /^mx\.mailpath\.local ESMTP/ });
  const ehlo = await client.command('EHLO client.test');
  t.equal(ehlo.code, 250);
  for (const ext of ['PIPELINING', '8BITMIME', 'SMTPUTF8', 'ENHANCEDSTATUSCODES', 'STARTTLS', `SIZE ${ctx.config.limits.send.max_message_bytes}`])
    t.match(ehlo.text, ext);
  t.notMatch(ehlo.text, /AUTH/, 'no AUTH offered over cleartext');
  t.match(await client.auth('mp_live_whatever'), { code: 530, text: '5.7.0 Must issue a STARTTLS command first' }, 'AUTH before STARTTLS (RFC 3207 §4)');
  t.match(await client.command('MAIL FROM:<a@b.example>'), { code: 530, text: '5.7.0 Authentication required' });
  t.equal((await client.startTls()).code, 220);
  const secured = await client.command('EHLO client.test');
  t.match(secured.text, /AUTH PLAIN LOGIN/);
  t.match(await client.command('MAIL FROM:<a@b.example>'), { code: 530, text: '5.7.0 Authentication required' });
  const tls = await RawSmtpClient.open(implicitTls, { tls: true });
  t.teardown(() => tls.client.destroy());
  await tls.client.command('EHLO client.test');
  t.match(await tls.client.command('MAIL FROM:<a@b.example>'), { code: 530 });
});

t.test('535 for a bad key, a session JWT, and a key without transactional:send', async (t) => {
  const s = await sender();
  const narrow = await createKey(app, s.tenant, { scopes: ['contacts:read'] });
  const sendOnly = await createKey(app, s.tenant, { scopes: ['transactional:send'] });
  const mail = { from: `news@${s.domain}`, to: 'x@dest.example', subject: 's', text: 't' };
  await t.rejects(send('mp_live_nosuchkey0000000000000000', mail), {
    code: 'EAUTH',
    responseCode: 535,
    response: /^535 5\.7\.8 Authentication credentials invalid/,
  });
  await t.rejects(send(s.tenant.token, mail), { code: 'EAUTH', responseCode: 535 });
  await t.rejects(send(narrow.key, mail), { code: 'EAUTH', responseCode: 535, response: /transactional:send/ });
  await send(sendOnly.key, mail);
  await sql`update api_keys set revoked_at = now() where id = ${sendOnly.id}`;
  await t.rejects(send(sendOnly.key, mail), { code: 'EAUTH', responseCode: 535 }, 'a revoked key');
  t.equal((await sendsOf(s.tenant.tenantId)).length, 1);
});

t.test('a test key is accepted and recorded as simulated, never queued', async (t) => {
  const s = await sender({ mode: 'test' });
  t.match(s.key, /^mp_test_/);
  await send(s.key, { from: `news@${s.domain}`, to: 'x@dest.example', subject: 's', text: 't' });
  const [row] = await sendsOf(s.tenant.tenantId);
  t.match(row, { status: 'simulated', mode: 'test', source: 'smtp' });
  t.equal(await jobsFor(row!.id), 0);
});

t.test('a test key sends from an added domain that is not verified yet: simulated and signed; a live key is refused; an unknown domain is 550', async (t) => {
  const s = await sender({ mode: 'test' }, false);
  const live = await createKey(app, s.tenant);
  const added = await call(app, 'POST', '/domains', { token: s.tenant.token, body: { name: `first-${s.keyId.slice(0, 8)}.example` } });
  t.equal(added.status, 201);
  const domain = added.body.data.name as string;
  await send(s.key, { from: `news@${domain}`, to: ['one@dest.example', 'two@dest.example'], subject: 'Submitted', text: 'Over SMTP.' });
  const rows = await sendsOf(s.tenant.tenantId);
  t.equal(rows.length, 2, 'one send per recipient');
  for (const row of rows) {
    t.match(row, { status: 'simulated', mode: 'test', source: 'smtp' });
    t.match(row.message!.toString(), new RegExp(`^DKIM-Signature: [^]*d=${domain.replace(/\./g, '\\.')};`), "signed with the domain's key");
    t.equal(await jobsFor(row.id), 0, 'never queued');
  }
  await t.rejects(send(s.key, { from: 'news@not-added.example', to: 'x@dest.example', subject: 's', text: 't' }), {
    responseCode: 550,
    message: /550 5\.7\.1 From header: its domain not-added\.example is not a domain of this tenant/,
  });
  await t.rejects(send(live.key, { from: `news@${domain}`, to: 'x@dest.example', subject: 's', text: 't' }), {
    responseCode: 550,
    message: /550 5\.7\.1 no sending domain of this tenant has SPF, DKIM and DMARC verified/,
  });
  t.equal((await sendsOf(s.tenant.tenantId)).length, 2);
});

t.test('550 5.7.1 for a From at a domain that is not a verified sending domain, and for a tenant without one', async (t) => {
  const s = await sender();
  await t.rejects(send(s.key, { from: `news@other-${s.domain}`, to: 'x@dest.example', subject: 's', text: 't' }), {
    responseCode: 550,
    message: /550 5\.7\.1 .*not a verified sending domain/,
  });
  const bare = await sender({}, false);
  await t.rejects(send(bare.key, { from: 'news@nowhere.example', to: 'x@dest.example', subject: 's', text: 't' }), {
    responseCode: 550,
    message: /550 5\.7\.1 no sending domain/,
  });
  t.equal((await sendsOf(s.tenant.tenantId)).length + (await sendsOf(bare.tenant.tenantId)).length, 0);
});

t.test('Message-ID and Date are added when missing and kept when present; Bcc never leaves', async (t) => {
  const s = await sender();
  const raw = (extra: string, to: string) => `${extra}From: news@${s.domain}\r\nTo: ${to}\r\nBcc: hidden@dest.example\r\nSubject: raw\r\n\r\nbody\r\n`;
  await send(s.key, { envelope: { from: `news@${s.domain}`, to: ['a@dest.example'] }, raw: raw('', 'a@dest.example') });
  const kept = 'Message-ID: <client-id.1@client.example>\r\nDate: Mon, 01 Jan 2024 00:00:00 +0000\r\n';
  await send(s.key, { envelope: { from: `news@${s.domain}`, to: ['b@dest.example'] }, raw: raw(kept, 'b@dest.example') });
  const [added, given] = await sendsOf(s.tenant.tenantId);
  const addedText = added!.message!.toString();
  t.match(added!.message_id, /@mx\.mailpath\.local$/);
  t.match(
    addedText,
    new RegExp(`\\r\\nMessage-ID: <${added!.message_id}>\\r\\nDate: [A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} \\+0000\\r\\n`),
  );
  t.equal(given!.message_id, 'client-id.1@client.example');
  const givenText = given!.message!.toString();
  t.ok(givenText.includes(`${kept}From: news@${s.domain}\r\nTo: b@dest.example\r\nSubject: raw\r\n\r\nbody\r\n`), 'the client headers kept byte-for-byte');
  t.equal((givenText.match(/^Message-ID:/gim) ?? []).length, 1);
  for (const text of [addedText, givenText]) t.notMatch(text, /hidden@dest\.example/);
});

t.test('several recipients become one send each, with the same message and Message-ID', async (t) => {
  const s = await sender();
  const to = ['one@dest.example', 'Two@Dest.Example', 'three@dest.example'];
  const info = await send(s.key, { from: `news@${s.domain}`, to, subject: 'Fan', text: 'out' });
  t.equal(info.accepted.length, 3);
  const rows = await sendsOf(s.tenant.tenantId);
  t.same(
    rows.map((r) => r.to_email),
    ['one@dest.example', 'three@dest.example', 'two@dest.example'],
  );
  t.equal(new Set(rows.map((r) => r.message_id)).size, 1);
  for (const row of rows) t.equal(await jobsFor(row.id), 1);
});

t.test('a suppressed recipient is dropped silently; a bad address is refused at RCPT', async (t) => {
  const s = await sender();
  t.equal((await call(app, 'POST', '/suppressions', { token: s.tenant.token, body: { email: 'gone@dest.example' } })).status, 201);
  const info = await send(s.key, { from: `news@${s.domain}`, to: ['gone@dest.example', 'ok@dest.example'], subject: 's', text: 't' });
  t.same(info.accepted, ['gone@dest.example', 'ok@dest.example']);
  t.same(
    (await sendsOf(s.tenant.tenantId)).map((r) => [r.to_email, r.status]),
    [
      ['gone@dest.example', 'dropped'],
      ['ok@dest.example', 'queued'],
    ],
  );
  const { client } = await RawSmtpClient.open(implicitTls, { tls: true });
  t.teardown(() => client.destroy());
  await client.command('EHLO client.test');
  t.equal((await client.auth(s.key)).code, 235);
  t.equal((await client.command('MAIL FROM:<news@x.example>')).code, 250);
  t.match(await client.command('RCPT TO:<bad..dots@dest.example>'), { code: 553, text: /^5\.1\.3 recipient/ });
});

t.test('a client that drops mid-DATA leaves nothing stored', async (t) => {
  const s = await sender();
  const { client } = await RawSmtpClient.open(implicitTls, { tls: true });
  await client.command('EHLO client.test');
  t.equal((await client.auth(s.key)).code, 235);
  t.equal((await client.command(`MAIL FROM:<news@${s.domain}>`)).code, 250);
  t.equal((await client.command('RCPT TO:<x@dest.example>')).code, 250);
  t.equal((await client.command('DATA')).code, 354);
  client.write(`From: news@${s.domain}\r\nSubject: half\r\n\r\n${'line of body\r\n'.repeat(200)}`);
  await new Promise((r) => setTimeout(r, 100));
  client.destroy();
  await new Promise((r) => setTimeout(r, 300));
  t.equal((await sendsOf(s.tenant.tenantId)).length, 0);
});

t.test('a suspended tenant is refused with 550 5.7.1', async (t) => {
  const s = await sender();
  await sql`update tenants set status = 'suspended' where id = ${s.tenant.tenantId}`;
  await t.rejects(send(s.key, { from: `news@${s.domain}`, to: 'x@dest.example', subject: 's', text: 't' }), {
    responseCode: 550,
    message: /550 5\.7\.1 account suspended/,
  });
  t.equal((await sendsOf(s.tenant.tenantId)).length, 0);
});

t.test('a suspension while the message comes in is refused at DATA with the same reply', async (t) => {
  const s = await sender();
  const { client } = await RawSmtpClient.open(implicitTls, { tls: true });
  t.teardown(() => client.destroy());
  await client.command('EHLO client.test');
  t.equal((await client.auth(s.key)).code, 235);
  t.equal((await client.command(`MAIL FROM:<news@${s.domain}>`)).code, 250);
  t.equal((await client.command('RCPT TO:<x@dest.example>')).code, 250);
  t.equal((await client.command('DATA')).code, 354);
  await sql`update tenants set status = 'suspended' where id = ${s.tenant.tenantId}`;
  t.match(await client.command(`From: news@${s.domain}\r\nSubject: late\r\n\r\nbody\r\n.`), { code: 550, text: /^5\.7\.1 account suspended/ });
  t.equal((await sendsOf(s.tenant.tenantId)).length, 0);
});

t.test(
  'Python smtplib over STARTTLS: 530 5.7.0 for AUTH before TLS, EXPN 502, VRFY 252, 553 5.6.7 without SMTPUTF8, an enhanced code on every reply',
  async (t) => {
    const s = await sender();
    const plain = Buffer.from(`\0apikey\0${s.key}`).toString('base64');
    // command_encoding utf-8: smtplib then sends a non-ASCII path as it is, without the SMTPUTF8 parameter.
    const program = `import json, smtplib, ssl
tls = ssl.create_default_context()
tls.check_hostname = False
tls.verify_mode = ssl.CERT_NONE
s = smtplib.SMTP('127.0.0.1', ${starttls}, timeout=10)
s.ehlo('client.test')
r = [s.docmd('AUTH', 'PLAIN ${plain}'), s.expn('staff'), s.verify('x@dest.example'), s.docmd('WIZ', 'magic'), s.mail('news@${s.domain}')]
offered = [sorted(s.esmtp_features)]
r.append(s.starttls(context=tls))
s.ehlo('client.test')
offered.append(sorted(s.esmtp_features))
r.append(s.docmd('AUTH', 'PLAIN ${plain}'))
s.command_encoding = 'utf-8'
r += [s.docmd('MAIL', 'FROM:<jöran@${s.domain}>'), s.mail('news@${s.domain}'), s.docmd('RCPT', 'TO:<jürgen@dest.example>')]
r += [s.rcpt('bad..dots@dest.example'), s.rcpt('ok@dest.example'), s.data(b'From: news@${s.domain}\\r\\nSubject: codes\\r\\n\\r\\nbody\\r\\n'), s.quit()]
print(json.dumps({'replies': [[c, m.decode()] for c, m in r], 'offered': offered}))
`;
    const output = await new Promise<string>((resolve, reject) =>
      execFile('/usr/bin/python3', ['-c', program], { timeout: 30_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}: ${stderr}`)) : resolve(stdout),
      ),
    );
    const { replies, offered } = JSON.parse(output) as { replies: [number, string][]; offered: string[][] };
    t.same(offered[0], ['8bitmime', 'enhancedstatuscodes', 'pipelining', 'size', 'smtputf8', 'starttls'], 'before TLS: no AUTH');
    t.ok(offered[1]!.includes('auth') && offered[1]!.includes('enhancedstatuscodes'), `after TLS: AUTH (${offered[1]})`);
    const codes = replies.map(([code, text]) => `${code} ${text.split(' ')[0]}`);
    t.same(codes, [
      ...['530 5.7.0', '502 5.5.1', '252 2.0.0', '500 5.5.2', '530 5.7.0'], // before TLS: AUTH, EXPN, VRFY, WIZ, MAIL
      ...['220 2.0.0', '235 2.7.0', '553 5.6.7', '250 2.1.0', '553 5.6.7', '553 5.1.3', '250 2.1.5', '250 2.0.0', '221 2.0.0'],
    ]);
    t.equal(replies[0]![1], '5.7.0 Must issue a STARTTLS command first');
    t.equal(replies[7]![1], '5.6.7 non-ASCII address without the SMTPUTF8 parameter (RFC 6531)');
    for (const [code, text] of replies) t.notMatch(text, /^\d\.\d{1,3}\.\d{1,3} \d\.\d{1,3}\.\d{1,3} /, `${code} ${text}: one code, not two`);
    t.same(
      (await sendsOf(s.tenant.tenantId)).map((r) => r.to_email),
      ['ok@dest.example'],
      'the message went to the one good recipient',
    );
  },
);
