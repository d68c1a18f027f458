// The IP watchdog on DNS-routed delivery: a block at the greeting of the first MX host quarantines the source address and ends the attempt (the next MX is
// not asked from a blocked address), while an ordinary greeting refusal still falls through to the next MX.
import t from 'tap';
import { listAttempts } from '../../../../shared/sending/outbound-log/queries.js';
import { deliveryFixture, quietSink } from '../../../helpers/delivery-fixture.js';
import { startDnsServer } from '../../../helpers/dns-server.js';
import { startSmtpSink } from '../../../helpers/smtp-sink.js';

const sink = await startSmtpSink(t);
const dns = await startDnsServer(t);
const { sql, sender, send, settled, outbound } = await deliveryFixture(t, {
  env: {
    MAILPATH_DNS_SERVERS: dns.address,
    MAILPATH_OUTBOUND_PORT: String(sink.port),
    MAILPATH_CONFIG__DNS__TIMEOUT_MS: '500',
    MAILPATH_CONFIG__DNS__TRIES: '1',
    MAILPATH_CONFIG__IP_POOLS__POOLS: JSON.stringify({ main: ['127.0.0.2', '127.0.0.3'] }),
    MAILPATH_CONFIG__IP_POOLS__DEFAULT_POOL: 'main',
    MAILPATH_CONFIG__IP_WATCHDOG__STATE_CACHE_MS: '0',
  },
});
await outbound(t);
const from = await sender();

let counter = 0;
/** A recipient at a fresh domain with two MX hosts, both the sink. */
function twoMx(): { to: string; domain: string } {
  counter++;
  const domain = `d${counter}.dest.example`;
  dns.setMx(domain, [
    { exchange: `mx1.${domain}`, priority: 10 },
    { exchange: `mx2.${domain}`, priority: 20 },
  ]);
  dns.setA(`mx1.${domain}`, ['127.0.0.1']);
  dns.setA(`mx2.${domain}`, ['127.0.0.1']);
  return { to: `rcpt@${domain}`, domain };
}

t.beforeEach(() => quietSink(sink));

t.test('an ordinary greeting refusal moves on to the next MX from the same address', async (t) => {
  const { to, domain } = twoMx();
  sink.refuseGreetings({ code: 554, text: 'mx1 is closed for maintenance' });
  const { id } = await send(from, { to });
  await settled(id, ['delivered']);
  t.match((await listAttempts(sql, id))[0], { outcome: 'delivered', remote_host: `mx2.${domain} [127.0.0.1]` });
  t.equal((await sql`select 1 from ip_quarantines`).length, 0);
});

t.test('a DNSBL refusal at the greeting quarantines the address and ends the attempt there', async (t) => {
  const { to, domain } = twoMx();
  sink.refuseGreetings({ code: 554, text: '5.7.1 Service unavailable; Client host [127.0.0.3] blocked using zen.spamhaus.org' });
  const { id } = await send(from, { to });
  await settled(id, ['deferred']);
  t.equal(sink.stats().opened, 1, 'mx2 was not asked from the blocked address');
  t.match((await listAttempts(sql, id))[0], { outcome: 'deferred', smtp_code: 554, remote_host: `mx1.${domain} [127.0.0.1]` });
  const [q] = await sql<{ address: string; rule: string }[]>`select address, rule from ip_quarantines`;
  t.match(q, { address: '127.0.0.3', rule: 'dnsbl' }, 'the second member in turn met the block');
  const [event] = await sql`select destination from ip_watchdog_events where kind = 'quarantined'`;
  t.equal(event!['destination'], `mx1.${domain} [127.0.0.1]`);
});
