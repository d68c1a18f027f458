// The MX as RFC 5321, 3463 and 6531 ask, driven by real clients (Python's smtplib, swaks, a raw socket) on loopback: postmaster, enhanced status codes on
// every reply, EXPN and VRFY, non-ASCII addresses without SMTPUTF8.
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { INBOUND_BOUNCE_JOBS } from '../../../shared/inbound/jobs.js';
import { RawSmtpClient, type SmtpReply } from '../../helpers/smtp-client.js';
import { MX_HOST, message, startTestMx, tenantDomain } from './fixtures.js';

const PYTHON = '/usr/bin/python3';
const SWAKS = '/usr/bin/swaks';
for (const tool of [PYTHON, SWAKS]) if (!existsSync(tool)) throw new Error(`${tool} is missing: apt-get install python3 swaks`);

const mx = await startTestMx(t);
const acme = await tenantDomain(mx.sql, { mailboxes: ['ann'] });
const quiet = await tenantDomain(mx.sql, { webhook: 'disabled' });

/** An enhanced status code (RFC 3463) opening the reply text, and only one. */
const ENHANCED = /^[245]\.\d{1,3}\.\d{1,3} (?![245]\.\d{1,3}\.\d{1,3} )/;

function run(file: string, args: string[], input?: string): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { timeout: 30_000 }, (err, stdout, stderr) =>
      resolve({ status: typeof err?.code === 'number' ? err.code : err ? -1 : 0, output: `${stdout}${stderr}` }),
    );
    if (input !== undefined) child.stdin!.end(input);
  });
}

/** Python's smtplib against the MX: `script` runs with `s` connected (EHLO sent) and prints JSON; returns it parsed. */
async function smtplib<T>(script: string): Promise<T> {
  const program = `import json, smtplib, sys\ns = smtplib.SMTP('127.0.0.1', ${mx.port}, timeout=10)\ns.ehlo('client.example')\n${script}\ns.quit()\n`;
  const { status, output } = await run(PYTHON, ['-c', program]);
  if (status !== 0) throw new Error(`python failed (${status}): ${output}`);
  return JSON.parse(output) as T;
}

t.test('RCPT TO:<Postmaster> without a domain, in any case, is accepted and stored as bounce mail, with its bounce job', async (t) => {
  const [mail, rcpt, data] = await smtplib<[number, string][]>(`
r = [s.mail('someone@sender.example'), s.rcpt('Postmaster')]
r.append(s.data(b'From: someone@sender.example\\r\\nSubject: to the postmaster\\r\\n\\r\\nHello postmaster.\\r\\n'))
print(json.dumps([[c, m.decode()] for c, m in r]))`);
  t.same(mail, [250, '2.1.0 Accepted']);
  t.same(rcpt, [250, '2.1.5 Accepted'], 'RFC 5321 §4.1.1.3: the domainless postmaster');
  t.match(data, [250, /^2\.0\.0 Ok: queued as [0-9a-f-]{36}$/]);
  const id = /queued as (\S+)/.exec(data![1])![1]!;
  const recipients = await mx.sql<{ id: string; recipient: string; kind: string; tenant_id: string | null }[]>`
    select id, recipient, kind, tenant_id from inbound_recipients where message_id = ${id}`;
  t.match(recipients, [{ recipient: 'Postmaster', kind: 'bounce', tenant_id: null }]);
  const jobs = await mx.sql`select 1 from pgboss.job where name = ${INBOUND_BOUNCE_JOBS} and data->>'recipient_id' = ${recipients[0]!.id}`;
  t.equal(jobs.length, 1, 'the bounce intake reads it: a DSN or abuse report there is applied');

  const { client } = await RawSmtpClient.open(mx.port);
  t.teardown(() => client.destroy());
  await client.command('EHLO client.example');
  await client.command('MAIL FROM:<someone@sender.example>');
  for (const to of ['postmaster', 'POSTMASTER', `PostMaster@${MX_HOST}`, `postmaster@${quiet.name}`]) {
    t.match(await client.command(`RCPT TO:<${to}>`), { code: 250, text: '2.1.5 Accepted' }, to);
  }
  t.match(await client.command('RCPT TO:<abuse>'), { code: 501 }, 'no other address without a domain');
  t.match(
    await client.command(`RCPT TO:<abuse@${quiet.name}>`),
    { code: 550, text: '5.1.1 no such recipient here' },
    'only postmaster at a domain that takes no mail',
  );
});

t.test("EHLO advertises ENHANCEDSTATUSCODES, and every other reply of a session (the library's own too) carries exactly one code", async (t) => {
  const { client, greeting } = await RawSmtpClient.open(mx.port);
  t.teardown(() => client.destroy());
  t.notMatch(greeting.text, /^\d\.\d/, 'none on the greeting (RFC 2034 §3)');
  const ehlo = await client.command('EHLO client.example');
  t.ok(ehlo.text.split('\n').includes('ENHANCEDSTATUSCODES'), ehlo.text);
  t.notOk(
    ehlo.text.split('\n').some((l) => /^\d\.\d/.test(l)),
    'none on EHLO lines (RFC 2034 §3)',
  );
  const replies: [string, SmtpReply][] = [];
  const say = async (line: string) => {
    const reply = await client.command(line);
    replies.push([line, reply]);
    return reply;
  };
  for (const line of [
    'NOOP',
    'HELP',
    'RSET',
    'XYZZY',
    'WIZ magic',
    'DATA',
    'RCPT TO:<ann@x.example>',
    'VRFY',
    'VRFY ann',
    'EXPN staff',
    `AUTH PLAIN ${Buffer.from('\0u\0p').toString('base64')}`,
    'MAIL FROM:broken',
    'MAIL FROM:<a@sender.example> SIZE=abc',
    'MAIL FROM:<a@sender.example> RET=FULL',
    'MAIL FROM:<a@sender.example>',
    'MAIL FROM:<b@sender.example>',
    'RCPT TO:<x@foreign.example>',
    'RCPT TO:<ann@',
    `RCPT TO:<ann@${acme.name}> NOTIFY=NEVER`,
    `RCPT TO:<ann@${acme.name}>`,
  ])
    await say(line);
  t.equal((await say('DATA')).code, 354);
  await say(`${message({ Subject: 'codes' })}.`);
  await say('STARTTLS x');
  for (const [line, reply] of replies) {
    if (reply.code === 354) t.notMatch(reply.text, /^\d\.\d/, 'none on a 3xx reply');
    else t.match(reply.text, ENHANCED, `${line} → ${reply.code} ${reply.text}`);
  }
  t.same(
    replies.map(([, r]) => `${r.code} ${r.text.split(' ')[0]}`),
    [
      '250 2.0.0',
      '214 2.0.0',
      '250 2.0.0',
      '500 5.5.2',
      '500 5.5.2',
      '503 5.5.1',
      '503 5.5.1',
      '501 5.5.4',
      '252 2.0.0',
      '502 5.5.1',
      '502 5.5.1',
      '501 5.1.7',
      '501 5.5.4',
      '555 5.5.4',
      '250 2.1.0',
      '503 5.5.1',
      '550 5.7.1',
      '501 5.1.3',
      '555 5.5.4',
      '250 2.1.5',
      '354 End',
      '250 2.0.0',
      '501 5.5.4',
    ],
    "each reply's code, the precise one where we give it",
  );
  t.match(await client.command('QUIT'), { code: 221, text: /^2\.0\.0 / });
});

t.test('EXPN is 502 5.5.1 and VRFY 252 (RFC 5321 §3.5.3, §7.3): no list is expanded, no address confirmed or denied', async (t) => {
  const [expn, vrfyOurs, vrfyUnknown] = await smtplib<[number, string][]>(`
r = [s.expn('staff'), s.verify('ann@${acme.name}'), s.verify('nobody@${acme.name}')]
print(json.dumps([[c, m.decode()] for c, m in r]))`);
  t.same(expn, [502, '5.5.1 EXPN is not supported']);
  t.same(vrfyOurs, vrfyUnknown, 'a mailbox and an unknown address get the same answer');
  t.match(vrfyOurs, [252, /^2\.0\.0 Cannot VRFY/]);
});

t.test('a non-ASCII address without SMTPUTF8 is 553 5.6.7 (RFC 6531), at MAIL and at RCPT; with it, or in A-labels, it passes', async (t) => {
  const swaks = await run(SWAKS, [
    ...['--server', `127.0.0.1:${mx.port}`, '--helo', 'client.example', '--timeout', '10'],
    ...['--from', 'jöran@sender.example', '--to', `ann@${acme.name}`],
  ]);
  t.match(swaks.output, /<\*\* 553 5\.6\.7 non-ASCII address without the SMTPUTF8 parameter/, 'swaks sends the UTF-8 sender as it is, without SMTPUTF8');
  t.notMatch(swaks.output, /queued as/);

  const { client } = await RawSmtpClient.open(mx.port);
  t.teardown(() => client.destroy());
  await client.command('EHLO client.example');
  t.match(await client.command('MAIL FROM:<jöran@sender.example> BODY=8BITMIME'), { code: 553, text: /^5\.6\.7 / }, 'in the local part');
  t.match(await client.command('MAIL FROM:<a@bücher.example>'), { code: 553, text: /^5\.6\.7 / }, 'in the domain');
  t.match(await client.command('RCPT TO:<jürgen@x.example>'), { code: 503 }, 'a refused MAIL leaves no transaction');
  t.match(await client.command('MAIL FROM:<a@xn--bcher-kva.example>'), { code: 250 }, 'an A-label domain is ASCII');
  t.match(await client.command(`RCPT TO:<jürgen@${acme.name}>`), { code: 553, text: '5.6.7 non-ASCII address without the SMTPUTF8 parameter (RFC 6531)' });
  t.match(await client.command(`RCPT TO:<ann@${acme.name}>`), { code: 250 });
  t.match(await client.command('RSET'), { code: 250 });
  t.match(await client.command('MAIL FROM:<jöran@sender.example> SMTPUTF8'), { code: 250, text: '2.1.0 Accepted' });
  t.match(await client.command(`RCPT TO:<jürgen@${acme.name}>`), { code: 250, text: '2.1.5 Accepted' }, 'with SMTPUTF8 on the MAIL');
});
