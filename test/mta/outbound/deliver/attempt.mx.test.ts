// Delivery routed by DNS (a loopback DNS server, the sink as every MX on MAILPATH_OUTBOUND_PORT): MX, fallback to the next MX, implicit MX, null MX, DNS
// failures, plaintext when STARTTLS is not offered.
import t from 'tap';
import { listAttempts } from '../../../../shared/sending/outbound-log/queries.js';
import { deliveryFixture, quietSink } from '../../../helpers/delivery-fixture.js';
import { startDnsServer } from '../../../helpers/dns-server.js';
import { startSmtpSink } from '../../../helpers/smtp-sink.js';

const sink = await startSmtpSink(t);
const dns = await startDnsServer(t);
const { sql, sender, send, settled, events, outbound } = await deliveryFixture(t, {
  env: {
    MAILPATH_DNS_SERVERS: dns.address,
    MAILPATH_OUTBOUND_PORT: String(sink.port),
    MAILPATH_CONFIG__DNS__TIMEOUT_MS: '500',
    MAILPATH_CONFIG__DNS__TRIES: '1',
    MAILPATH_CONFIG__DELIVERY__TIMEOUTS__GREETING_MS: '1000',
    MAILPATH_CONFIG__DELIVERY__TIMEOUTS__SOCKET_MS: '2000',
  },
});
await outbound(t);
const from = await sender();
const bounceOf = async (id: string) => (await events(id)).find((e) => e.type === 'bounce');

let counter = 0;
/** A recipient at a fresh domain, so each test's DNS records are its own. */
const recipient = () => {
  counter++;
  return { domain: `d${counter}.dest.example`, to: `rcpt@d${counter}.dest.example` };
};

t.beforeEach(async () => {
  dns.setMode('answer');
  await quietSink(sink);
});

t.test('mail goes to the MX host, in plaintext when STARTTLS is not offered', async (t) => {
  const { domain, to } = recipient();
  dns.setMx(domain, [{ exchange: `mx.${domain}`, priority: 10 }]);
  dns.setA(`mx.${domain}`, ['127.0.0.1']);
  const { id } = await send(from, { to });
  await settled(id, ['delivered']);
  const [got] = await sink.waitForMessages(1);
  t.same(got!.to, [to]);
  t.equal(got!.secure, false, 'STARTTLS is opportunistic, never required');
  t.match((await listAttempts(sql, id))[0], { outcome: 'delivered', remote_host: `mx.${domain} [127.0.0.1]` });
});

t.test('an MX host that cannot be reached is skipped for the next one', async (t) => {
  const { domain, to } = recipient();
  dns.setMx(domain, [
    { exchange: `mx2.${domain}`, priority: 20 },
    { exchange: `mx1.${domain}`, priority: 10 },
  ]);
  dns.setA(`mx1.${domain}`, ['127.0.0.1']);
  dns.setA(`mx2.${domain}`, ['127.0.0.1']);
  // The first connection (to mx1, the preferred host) never gets a greeting.
  sink.holdGreetings(1);
  const { id } = await send(from, { to });
  await settled(id, ['delivered']);
  const attempts = await listAttempts(sql, id);
  t.equal(attempts.length, 1, 'one attempt, two hosts');
  t.match(attempts[0], { outcome: 'delivered', remote_host: `mx2.${domain} [127.0.0.1]` });
  t.equal(sink.stats().opened, 2);
  t.equal(sink.messages.length, 1);
});

t.test("without an MX record the domain's own address is used (implicit MX)", async (t) => {
  const { domain, to } = recipient();
  dns.setA(domain, ['127.0.0.1']);
  const { id } = await send(from, { to });
  await settled(id, ['delivered']);
  t.match((await listAttempts(sql, id))[0], { remote_host: `${domain} [127.0.0.1]` });
});

t.test('a null MX is a hard bounce (5.1.10) without any connection; so is a domain with no MX and no address', async (t) => {
  const nullMx = recipient();
  dns.setMx(nullMx.domain, [{ exchange: '.', priority: 0 }]);
  const { id } = await send(from, { to: nullMx.to });
  const row = await settled(id, ['bounced']);
  t.match(row.status_detail, /^5\.1\.10 .*null MX/);
  t.match(await bounceOf(id), { subtype: 'hard', detail: { enhanced_code: '5.1.10', remote_host: null } });
  t.equal((await sql`select 1 from suppressions where tenant_id = ${from.tenant.id} and email = ${nullMx.to}`).length, 1);

  const nowhere = recipient();
  dns.setTxt(nowhere.domain, ['v=spf1 -all']);
  const { id: second } = await send(from, { to: nowhere.to });
  await settled(second, ['bounced']);
  t.match(await bounceOf(second), { subtype: 'hard', detail: { enhanced_code: '5.1.2' } });
  t.equal(sink.stats().opened, 0);
});

t.test('a DNS failure (SERVFAIL) defers the message instead of bouncing it', async (t) => {
  const { domain, to } = recipient();
  dns.setMx(domain, [{ exchange: `mx.${domain}`, priority: 10 }]);
  dns.setMode('servfail');
  const { id } = await send(from, { to });
  const row = await settled(id, ['deferred']);
  t.match(row.status_detail, /SERVFAIL/);
  t.match((await listAttempts(sql, id))[0], { outcome: 'deferred', remote_host: null, smtp_code: null, reply: /ESERVFAIL/ });
  t.equal(sink.stats().opened, 0);
});
