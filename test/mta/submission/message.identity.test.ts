// Submission on loopback: the identity fields of a message (From, Sender, Resent-*) through real SMTP sessions: malformed, duplicated or foreign ones
// refused, nothing stored.
import t from 'tap';
import { startSubmission } from '../../../mta/submission/server.js';
import { buildTestApp, createKey, registerTenant } from '../../helpers/app.js';
import { stopOnTeardown } from '../../helpers/net.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { RawSmtpClient, type SmtpReply } from '../../helpers/smtp-client.js';

const { app, ctx, sql } = await buildTestApp(t, {
  env: { MAILPATH_SUBMISSION_PORT: '0', MAILPATH_SUBMISSION_TLS_PORT: '0', MAILPATH_BIND_HOST: '127.0.0.1' },
});
const submission = stopOnTeardown(t, await startSubmission(ctx));

const tenant = await registerTenant(app);
const domain = (await verifiedSendingDomain(sql, ctx.vault, tenant.tenantId)).name;
const { key } = await createKey(app, tenant);

/** One message through an authenticated session on the implicit TLS port; the reply to its final dot. */
async function submit(headers: string): Promise<SmtpReply> {
  const { client } = await RawSmtpClient.open(submission.ports.implicitTls, { tls: true });
  try {
    await client.command('EHLO client.test');
    const auth = await client.auth(key);
    if (auth.code !== 235) throw new Error(`AUTH failed: ${auth.code} ${auth.text}`);
    if ((await client.command(`MAIL FROM:<news@${domain}>`)).code !== 250) throw new Error('MAIL refused');
    if ((await client.command('RCPT TO:<rcpt@dest.example>')).code !== 250) throw new Error('RCPT refused');
    if ((await client.command('DATA')).code !== 354) throw new Error('DATA refused');
    return await client.command(`${headers}\r\nTo: rcpt@dest.example\r\nSubject: identity\r\n\r\nbody\r\n.`);
  } finally {
    await client.quit();
  }
}

const stored = async () => (await sql<{ n: number }[]>`select count(*)::int as n from sends where tenant_id = ${tenant.tenantId}`)[0]!.n;

t.test('a malformed From is refused with 550 5.6.0: trailing text, a second or unquoted address, groups, comments, duplicates', async (t) => {
  const before = await stored();
  const cases: [string, RegExp][] = [
    [`From: <news@${domain}>ceo@evil.example`, /^5\.6\.0 the From header has text \("c"\) after the address/],
    [`From: CEO <ceo@evil.example> <news@${domain}>`, /^5\.6\.0 the From header has a second mailbox/],
    [`From: ceo@evil.example <news@${domain}>`, /^5\.6\.0 the From header has an address outside the angle brackets/],
    [`From: news@${domain}, ceo@evil.example`, /^5\.6\.0 the From header has a second mailbox/],
    [`From: Staff: news@${domain};`, /^5\.6\.0 the From header has group syntax/],
    [`From: news@${domain} (ceo@evil.example)`, /^5\.6\.0 the From header has a comment/],
    [`From: news@${domain}\r\nFrom: ceo@evil.example`, /^5\.6\.0 the message has more than one From header/],
  ];
  for (const [headers, text] of cases) t.match(await submit(headers), { code: 550, text }, headers);
  t.equal(await stored(), before, 'nothing stored');
});

t.test('display names may be encoded words or quoted text that looks like an address', async (t) => {
  const before = await stored();
  t.match(await submit(`From: =?utf-8?q?caf=C3=A9?= <news@${domain}>`), { code: 250 });
  t.match(await submit(`From: "CEO <ceo@evil.example>" <news@${domain}>`), { code: 250 });
  const rows = await sql<{ from_email: string }[]>`select from_email from sends where tenant_id = ${tenant.tenantId} order by created_at desc limit 2`;
  t.same(
    rows.map((r) => r.from_email),
    [`news@${domain}`, `news@${domain}`],
  );
  t.equal(await stored(), before + 2);
});

t.test('a Sender outside the tenant sending domains is refused with 550 5.7.1; one at them is kept', async (t) => {
  const before = await stored();
  t.match(await submit(`From: news@${domain}\r\nSender: ceo@evil.example`), {
    code: 550,
    text: /^5\.7\.1 Sender header: its domain evil\.example is not a verified sending domain/,
  });
  t.match(await submit(`From: news@${domain}\r\nSender: <ops@${domain}>ceo@evil.example`), { code: 550, text: /^5\.6\.0 the Sender header has text/ });
  t.match(await submit(`From: news@${domain}\r\nSender: ops@${domain}\r\nSender: ceo@evil.example`), {
    code: 550,
    text: /^5\.6\.0 the message has more than one Sender header/,
  });
  t.equal(await stored(), before, 'nothing stored');
  t.match(await submit(`From: news@${domain}\r\nSender: Ops <ops@${domain}>`), { code: 250 });
  const [row] = await sql<{ message: Buffer }[]>`select message from sends where tenant_id = ${tenant.tenantId} order by created_at desc limit 1`;
  t.match(row!.message.toString(), `\r\nSender: Ops <ops@${domain}>\r\n`);
});

t.test('Resent-* fields are refused with 550 5.7.1, even at the tenant domain', async (t) => {
  const before = await stored();
  for (const field of ['Resent-From: ceo@evil.example', `Resent-Sender: ops@${domain}`, `resent-from: news@${domain}`]) {
    t.match(await submit(`From: news@${domain}\r\n${field}`), { code: 550, text: /^5\.7\.1 Resent- header fields are not accepted/ }, field);
  }
  t.equal(await stored(), before, 'nothing stored');
});
