// Submission limits on loopback: recipients per message, message size, the monthly quota, the send rate limit, graceful stop.
import t from 'tap';
import { startSubmission } from '../../../mta/submission/server.js';
import { monthlyUsage } from '../../../shared/limits/quota/usage.js';
import { utcMonth } from '../../../shared/deliverability/warmup/tiers.js';
import { buildTestApp, createKey, registerTenant } from '../../helpers/app.js';
import { stopOnTeardown } from '../../helpers/net.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { RawSmtpClient } from '../../helpers/smtp-client.js';

const { app, ctx, sql } = await buildTestApp(t, {
  env: {
    MAILPATH_SUBMISSION_PORT: '0',
    MAILPATH_SUBMISSION_TLS_PORT: '0',
    MAILPATH_BIND_HOST: '127.0.0.1',
    MAILPATH_SHUTDOWN_TIMEOUT_MS: '5000',
    MAILPATH_CONFIG__LIMITS__SUBMISSION__MAX_RECIPIENTS: '3',
    MAILPATH_CONFIG__LIMITS__SEND__MAX_MESSAGE_BYTES: '20000',
    MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__SEND: '5',
  },
});
const submission = stopOnTeardown(t, await startSubmission(ctx));

async function sender() {
  const tenant = await registerTenant(app);
  const domain = await verifiedSendingDomain(sql, ctx.vault, tenant.tenantId);
  const { key } = await createKey(app, tenant);
  return { tenantId: tenant.tenantId, from: `news@${domain.name}`, key };
}

/** An authenticated session on the implicit TLS port of `port` (the shared server unless told). */
async function session(key: string, port = submission.ports.implicitTls) {
  const { client } = await RawSmtpClient.open(port, { tls: true });
  t.teardown(() => client.destroy());
  await client.command('EHLO client.test');
  const auth = await client.auth(key);
  if (auth.code !== 235) throw new Error(`AUTH failed: ${auth.code} ${auth.text}`);
  return client;
}

/** DATA with a small message; returns the final reply. */
async function data(client: RawSmtpClient, from: string, body = 'hello') {
  const go = await client.command('DATA');
  if (go.code !== 354) return go;
  return client.command(`From: ${from}\r\nSubject: limits\r\n\r\n${body}\r\n.`);
}

const sendCount = async (tenantId: string) => (await sql<{ n: number }[]>`select count(*)::int as n from sends where tenant_id = ${tenantId}`)[0]!.n;

t.test('at most max_recipients per message: 452 4.5.3 beyond, a repeated address does not count', async (t) => {
  const s = await sender();
  const client = await session(s.key);
  t.equal((await client.command(`MAIL FROM:<${s.from}>`)).code, 250);
  for (const rcpt of ['a', 'b', 'c']) t.equal((await client.command(`RCPT TO:<${rcpt}@dest.example>`)).code, 250);
  t.equal((await client.command('RCPT TO:<A@dest.example>')).code, 250, 'the same address again');
  t.match(await client.command('RCPT TO:<d@dest.example>'), { code: 452, text: /^4\.5\.3 too many recipients: at most 3/ });
  t.match(await data(client, s.from), { code: 250 });
  t.equal(await sendCount(s.tenantId), 3);
});

t.test('a message over the size limit is refused with 552 5.3.4 and nothing is stored', async (t) => {
  const s = await sender();
  const client = await session(s.key);
  t.match((await client.command('EHLO again.test')).text, /SIZE 20000/);
  t.equal((await client.command(`MAIL FROM:<${s.from}> SIZE=30000`)).code, 552, 'a declared size over the limit');
  t.equal((await client.command(`MAIL FROM:<${s.from}>`)).code, 250);
  t.equal((await client.command('RCPT TO:<big@dest.example>')).code, 250);
  t.match(await data(client, s.from, 'x'.repeat(76).concat('\r\n').repeat(400)), {
    code: 552,
    text: /^5\.3\.4 message exceeds the fixed maximum message size of 20000 bytes/,
  });
  t.equal(await sendCount(s.tenantId), 0);
  // The session goes on: the next message is accepted.
  t.equal((await client.command(`MAIL FROM:<${s.from}>`)).code, 250);
  t.equal((await client.command('RCPT TO:<small@dest.example>')).code, 250);
  t.match(await data(client, s.from), { code: 250 });
});

t.test('the monthly quota: refused per recipient at RCPT, and at DATA only when no recipient got through', async (t) => {
  const s = await sender();
  const { cap } = await monthlyUsage(sql, s.tenantId, new Date());
  const setUsage = (sent: number) =>
    sql`insert into tenant_monthly_usage (tenant_id, month, sent) values (${s.tenantId}, ${utcMonth(new Date())}, ${sent})
        on conflict (tenant_id, month) do update set sent = excluded.sent`;
  await setUsage(cap - 1);
  const client = await session(s.key);
  t.equal((await client.command(`MAIL FROM:<${s.from}>`)).code, 250);
  t.equal((await client.command('RCPT TO:<one@dest.example>')).code, 250);
  t.match(await client.command('RCPT TO:<two@dest.example>'), { code: 552, text: new RegExp(`^5\\.2\\.2 monthly send quota exhausted \\(cap ${cap}\\)`) });
  t.match(await data(client, s.from), { code: 250 });
  t.equal(await sendCount(s.tenantId), 1);

  // Usage moving between RCPT and DATA (another session): the gate decides, one reply for the message.
  await setUsage(cap - 2);
  t.equal((await client.command(`MAIL FROM:<${s.from}>`)).code, 250);
  t.equal((await client.command('RCPT TO:<three@dest.example>')).code, 250);
  t.equal((await client.command('RCPT TO:<four@dest.example>')).code, 250);
  await setUsage(cap - 1);
  t.match(await data(client, s.from), { code: 250, text: /for 1 of 2 recipients; 1 refused: 552 5\.2\.2/ });
  t.equal(await sendCount(s.tenantId), 2);

  await setUsage(cap - 1);
  t.equal((await client.command(`MAIL FROM:<${s.from}>`)).code, 250);
  t.equal((await client.command('RCPT TO:<five@dest.example>')).code, 250);
  await setUsage(cap);
  t.match(await data(client, s.from), { code: 552, text: /^5\.2\.2 monthly send quota exhausted/ });
  t.equal(await sendCount(s.tenantId), 2);
});

t.test("each recipient counts against the key's send rate limit: 451 4.7.1 when it is spent", async (t) => {
  const s = await sender();
  const client = await session(s.key);
  t.equal((await client.command(`MAIL FROM:<${s.from}>`)).code, 250);
  for (const rcpt of ['a', 'b', 'c']) t.equal((await client.command(`RCPT TO:<${rcpt}@dest.example>`)).code, 250);
  t.match(await data(client, s.from), { code: 250 });
  t.equal((await client.command(`MAIL FROM:<${s.from}>`)).code, 250);
  for (const rcpt of ['d', 'e']) t.equal((await client.command(`RCPT TO:<${rcpt}@dest.example>`)).code, 250);
  t.match(await client.command('RCPT TO:<f@dest.example>'), { code: 451, text: /^4\.7\.1 rate limit of 5 messages per minute reached: retry after \d+s/ });
  t.match(await data(client, s.from), { code: 250 });
  t.equal(await sendCount(s.tenantId), 5);
});

t.test('stop: idle sessions get 421 at once, a message in DATA finishes, then the ports close', async (t) => {
  const s = await sender();
  const own = await startSubmission(ctx);
  const idle = await session(s.key, own.ports.implicitTls);
  const busy = await session(s.key, own.ports.implicitTls);
  t.equal((await busy.command(`MAIL FROM:<${s.from}>`)).code, 250);
  t.equal((await busy.command('RCPT TO:<late@dest.example>')).code, 250);
  t.equal((await busy.command('DATA')).code, 354);
  busy.write(`From: ${s.from}\r\nSubject: in flight\r\n\r\n`);
  let stopped = false;
  const stopping = own.stop().then(() => {
    stopped = true;
  });
  t.match(await idle.read(), { code: 421, text: /^4\.3\.2 / });
  t.match(await busy.command('body\r\n.'), { code: 250 });
  t.notOk(stopped, 'stop waits for the session that was in DATA');
  await busy.quit();
  await stopping;
  await t.rejects(RawSmtpClient.open(own.ports.implicitTls, { tls: true }), { code: 'ECONNREFUSED' });
  t.equal(await sendCount(s.tenantId), 1);
});
