// Delivery routed by DNS (a loopback DNS server, the sink as every MX on MAILPATH_OUTBOUND_PORT): MX, fallback to the next MX, implicit MX, null MX, DNS failures, plaintext when STARTTLS is not offered.
import t from 'tap';
import { acceptSend, type AcceptInput } from '../../../../mta/outbound/accept.js';
import { startOutbound } from '../../../../mta/outbound/deliver/start.js';
import { listAttempts } from '../../../../shared/sends/queries.js';
import { buildTestApp } from '../../../helpers/app.js';
import { startDnsServer } from '../../../helpers/dns-server.js';
import { verifiedSendingDomain, type SendingDomain } from '../../../helpers/sending-domain.js';
import { startSmtpSink } from '../../../helpers/smtp-sink.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const sink = await startSmtpSink(t);
const dns = await startDnsServer(t);
const { ctx, sql } = await buildTestApp(t, {
  env: {
    MAILPATH_DNS_SERVERS: dns.address,
    MAILPATH_OUTBOUND_PORT: String(sink.port),
    MAILPATH_CONFIG__DNS__TIMEOUT_MS: '500',
    MAILPATH_CONFIG__DNS__TRIES: '1',
    MAILPATH_CONFIG__DELIVERY__DESTINATION__IDLE_CLOSE_MS: '300',
    MAILPATH_CONFIG__DELIVERY__TIMEOUTS__GREETING_MS: '1000',
    MAILPATH_CONFIG__DELIVERY__TIMEOUTS__SOCKET_MS: '2000',
  },
});
const deps = ctx.outbound;
const running = await startOutbound(deps);
t.teardown(() => running.stop());

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const settled = (id: string, statuses: string[]) =>
  waitFor(`send ${id} to be ${statuses.join(' or ')}`, async () => {
    const [row] = await sql<{ status: string; status_detail: string | null }[]>`select status, status_detail from sends where id = ${id}`;
    return row && statuses.includes(row.status) ? row : undefined;
  });
const bounceOf = async (id: string) => (await sql<{ subtype: string; detail: Record<string, unknown> }[]>`select subtype, detail from events where send_id = ${id} and type = 'bounce'`)[0];

let from: { tenant: AcceptInput['tenant']; domain: SendingDomain };
let counter = 0;

async function send(to: string): Promise<string> {
  const result = await acceptSend(deps, {
    tenant: from.tenant,
    mode: 'live',
    apiKeyId: null,
    source: 'api',
    from: { address: `news@${from.domain.name}` },
    to,
    content: { kind: 'compose', subject: 'Hello', text: 'Hi there' },
  });
  return result.send.id;
}

/** A recipient at a fresh domain, so each test's DNS records are its own. */
const recipient = () => {
  counter++;
  return { domain: `d${counter}.dest.example`, to: `rcpt@d${counter}.dest.example` };
};

t.before(async () => {
  const tenantId = await insertTenant(sql);
  from = { tenant: { id: tenantId, status: 'active', is_sandbox: false }, domain: await verifiedSendingDomain(sql, ctx.domains.vault, tenantId) };
});

t.beforeEach(async () => {
  dns.setMode('answer');
  // Each test counts its own connections: the previous test's idle ones close first (idle_close_ms).
  await waitFor('idle connections to close', async () => (sink.stats().open === 0 ? true : undefined));
  sink.reset();
});

t.test('mail goes to the MX host, in plaintext when STARTTLS is not offered', async (t) => {
  const { domain, to } = recipient();
  dns.setMx(domain, [{ exchange: `mx.${domain}`, priority: 10 }]);
  dns.setA(`mx.${domain}`, ['127.0.0.1']);
  const id = await send(to);
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
  const id = await send(to);
  await settled(id, ['delivered']);
  const attempts = await listAttempts(sql, id);
  t.equal(attempts.length, 1, 'one attempt, two hosts');
  t.match(attempts[0], { outcome: 'delivered', remote_host: `mx2.${domain} [127.0.0.1]` });
  t.equal(sink.stats().opened, 2);
  t.equal(sink.messages.length, 1);
});

t.test('without an MX record the domain\'s own address is used (implicit MX)', async (t) => {
  const { domain, to } = recipient();
  dns.setA(domain, ['127.0.0.1']);
  const id = await send(to);
  await settled(id, ['delivered']);
  t.match((await listAttempts(sql, id))[0], { remote_host: `${domain} [127.0.0.1]` });
});

t.test('a null MX is a hard bounce (5.1.10) without any connection; so is a domain with no MX and no address', async (t) => {
  const nullMx = recipient();
  dns.setMx(nullMx.domain, [{ exchange: '.', priority: 0 }]);
  const id = await send(nullMx.to);
  const row = await settled(id, ['bounced']);
  t.match(row.status_detail, /^5\.1\.10 .*null MX/);
  t.match(await bounceOf(id), { subtype: 'hard', detail: { enhanced_code: '5.1.10', remote_host: null } });
  t.equal((await sql`select 1 from suppressions where tenant_id = ${from.tenant.id} and email = ${nullMx.to}`).length, 1);

  const nowhere = recipient();
  dns.setTxt(nowhere.domain, ['v=spf1 -all']);
  const second = await send(nowhere.to);
  await settled(second, ['bounced']);
  t.match(await bounceOf(second), { subtype: 'hard', detail: { enhanced_code: '5.1.2' } });
  t.equal(sink.stats().opened, 0);
});

t.test('a DNS failure (SERVFAIL) defers the message instead of bouncing it', async (t) => {
  const { domain, to } = recipient();
  dns.setMx(domain, [{ exchange: `mx.${domain}`, priority: 10 }]);
  dns.setMode('servfail');
  const id = await send(to);
  const row = await settled(id, ['deferred']);
  t.match(row.status_detail, /SERVFAIL/);
  t.match((await listAttempts(sql, id))[0], { outcome: 'deferred', remote_host: null, smtp_code: null, reply: /ESERVFAIL/ });
  t.equal(sink.stats().opened, 0);
});
