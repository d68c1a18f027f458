// Never an open relay: a real SMTP client (swaks) tries the classic relay tricks against the MX; every one is refused and nothing is stored.
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { RawSmtpClient } from '../../helpers/smtp-client.js';
import { MX_HOST, NOTHING_STORED, message, startTestMx, storedCounts, tenantDomain } from './fixtures.js';

const SWAKS = '/usr/bin/swaks';
if (!existsSync(SWAKS)) throw new Error(`${SWAKS} is missing: apt-get install swaks`);

const mx = await startTestMx(t);
const ours = await tenantDomain(mx.sql, { name: 'tenant-owned.example', mailboxes: ['user'] });
const unverified = await tenantDomain(mx.sql, { name: 'mx-not-verified.example', mxVerified: false });

/** One swaks session to `to`; returns the reply line swaks marked as the RCPT answer, and its exit status. */
function swaks(to: string): Promise<{ rcptReply: string; status: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      SWAKS,
      [
        '--server',
        `127.0.0.1:${mx.port}`,
        '--from',
        'spammer@sender.example',
        '--to',
        to,
        '--helo',
        'relay-tester.example',
        '--timeout',
        '10',
        '--body',
        'relay test',
      ],
      { timeout: 30_000 },
      (err, stdout, stderr) => {
        const output = `${stdout}${stderr}`;
        const lines = output.split('\n');
        const rcptAt = lines.findIndex((l) => / -> RCPT TO:/.test(l));
        const rcptReply = (lines[rcptAt + 1] ?? '').replace(/^\s*<[-*]+\s*/, '').trim();
        resolve({ rcptReply, status: typeof err?.code === 'number' ? err.code : 0, output });
      },
    );
  });
}

const TRICKS: [string, string][] = [
  ['a foreign domain', 'victim@foreign.example'],
  ['a foreign domain in capitals', 'VICTIM@FOREIGN.EXAMPLE'],
  ['the %-hack at a tenant domain', `victim%foreign.example@${ours.name}`],
  ['the %-hack at our mail host', `victim%foreign.example@${MX_HOST}`],
  ['a bang path at a tenant domain', `foreign.example!victim@${ours.name}`],
  ['a source route through us to a foreign domain', `@${ours.name}:victim@foreign.example`],
  ['a source route before a tenant mailbox', `@relay.example:user@${ours.name}`],
  ['a quoted local part holding @', `"victim@foreign.example"@${ours.name}`],
  ['two @ signs', `victim@foreign.example@${ours.name}`],
  ['a tenant domain whose MX is not verified', `anyone@${unverified.name}`],
  ['a subdomain of a tenant domain', `victim@sub.${ours.name}`],
  ['an IP literal', 'victim@[127.0.0.1]'],
  ['a trailing dot', 'victim@foreign.example.'],
  ['a domain hiding ours', `victim@${ours.name}.foreign.example`],
];

for (const [trick, to] of TRICKS) {
  t.test(`refused: ${trick} (${to})`, async (t) => {
    const { rcptReply, status, output } = await swaks(to);
    t.match(rcptReply, /^5\d\d /, `RCPT answered 5xx: ${rcptReply}`);
    t.not(status, 0, 'swaks reports the failure');
    t.notMatch(output, /queued as/, 'no message accepted');
  });
}

t.test('a refused recipient beside an accepted one is not stored, and no relay trick left a row', async (t) => {
  const { client } = await RawSmtpClient.open(mx.port);
  await client.command('EHLO relay-tester.example');
  await client.command('MAIL FROM:<spammer@sender.example>');
  t.equal((await client.command(`RCPT TO:<user@${ours.name}>`)).code, 250);
  t.equal((await client.command('RCPT TO:<victim@foreign.example>')).code, 550);
  t.equal((await client.command(`RCPT TO:<victim%foreign.example@${ours.name}>`)).code, 550);
  await client.command('DATA');
  t.equal((await client.command(`${message({ Subject: 'mixed' })}.`)).code, 250);
  await client.quit();
  const recipients = await mx.sql<{ recipient: string }[]>`select recipient from inbound_recipients`;
  t.same(
    recipients.map((r) => r.recipient),
    [`user@${ours.name}`],
    'only our mailbox',
  );
  const counts = await storedCounts(mx.sql);
  t.same(counts, { ...NOTHING_STORED, inbound_messages: 1, inbound_recipients: 1, mailbox_messages: 1, inbound_webhook_deliveries: 1 });
});
