// The DNS resolver against a real DNS server on loopback: answers, absences, and failures that must not read as absences.
import t from 'tap';
import { DnsLookupError, createResolver, resolverFor, type DnsResolver } from '../../../shared/kernel/dns.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { freePort } from '../../helpers/net.js';

// Short, so the failure cases cost well under a second each.
const FAST = { timeoutMs: 200, tries: 1 };

/** The DnsLookupError a look-up rejected with; anything else (an answer, another error) fails the test. */
async function lookUpError(lookUp: Promise<unknown>): Promise<DnsLookupError> {
  let answer: unknown;
  try {
    answer = await lookUp;
  } catch (err) {
    if (err instanceof DnsLookupError) return err;
    throw err;
  }
  throw new Error(`expected a DnsLookupError, got an answer: ${JSON.stringify(answer)}`);
}

// A DKIM public key of a 2048-bit RSA key is 392 base64 characters; the record is 410 with its tags.
const dkim2048 = `v=DKIM1; k=rsa; p=${'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA'.padEnd(392, 'Qx7+')}`;

t.test('answers', async (t) => {
  const server = await startDnsServer(t);
  const dns: DnsResolver = createResolver([server.address], FAST);

  await t.test('a TXT record of one string', async (t) => {
    server.setTxt('example.test', ['v=spf1 -all']);
    t.same(await dns.txt('example.test'), ['v=spf1 -all']);
  });

  await t.test('names are case-insensitive and may end in a dot', async (t) => {
    server.setTxt('Mixed.Example.TEST.', ['hello']);
    t.same(await dns.txt('mixed.example.test'), ['hello']);
    t.same(await dns.txt('MIXED.example.test.'), ['hello']);
  });

  await t.test('a TXT record of several strings comes back joined with nothing between them', async (t) => {
    t.equal(dkim2048.length, 410);
    server.setTxt('sel._domainkey.example.test', [[dkim2048.slice(0, 255), dkim2048.slice(255)]]);
    t.same(await dns.txt('sel._domainkey.example.test'), [dkim2048]);
    server.setTxt('spf.example.test', [['v=spf1 ip4:192.0.2.0/24', ' include:_spf.example.test', ' -all']]);
    t.same(await dns.txt('spf.example.test'), ['v=spf1 ip4:192.0.2.0/24 include:_spf.example.test -all']);
  });

  await t.test('an answer too large for UDP arrives whole (truncated over UDP, asked again over TCP)', async (t) => {
    // A 4096-bit key: the answer is past the 512 bytes a UDP reply without EDNS may carry.
    const big = `v=DKIM1; k=rsa; p=${'A'.repeat(736)}`;
    server.setTxt('big._domainkey.example.test', [big]);
    const before = server.queries();
    t.same(await dns.txt('big._domainkey.example.test'), [big]);
    t.equal(server.queries() - before, 2, 'one query over UDP, answered TC; one over TCP');

    const huge = 'x'.repeat(3000);
    server.setTxt('huge.example.test', [huge, 'second']);
    t.same((await dns.txt('huge.example.test')).sort(), ['second', huge].sort());
  });

  await t.test('several TXT records at one name', async (t) => {
    server.setTxt('multi.example.test', ['v=spf1 -all', 'google-site-verification=abc', ['two', 'parts']]);
    t.same((await dns.txt('multi.example.test')).sort(), ['google-site-verification=abc', 'twoparts', 'v=spf1 -all']);
  });

  await t.test('MX records keep their priorities; exchanges lower-cased without the trailing dot', async (t) => {
    server.setMx('example.test', [
      { exchange: 'MX1.Example.TEST.', priority: 10 },
      { exchange: 'backup.example.test', priority: 20 },
    ]);
    const mx = await dns.mx('example.test');
    t.same(
      mx.sort((a, b) => a.priority - b.priority),
      [
        { exchange: 'mx1.example.test', priority: 10 },
        { exchange: 'backup.example.test', priority: 20 },
      ],
    );
  });

  await t.test('a null MX (RFC 7505) has an empty exchange', async (t) => {
    server.setMx('nomail.example.test', [{ exchange: '.', priority: 0 }]);
    t.same(await dns.mx('nomail.example.test'), [{ exchange: '', priority: 0 }]);
  });

  await t.test('addresses() gives both A and AAAA', async (t) => {
    server.setA('host.example.test', ['192.0.2.10', '2001:db8::10', '192.0.2.11']);
    t.same((await dns.addresses('host.example.test')).sort(), ['192.0.2.10', '192.0.2.11', '2001:db8::10']);
    server.setA('v6only.example.test', ['2001:db8::1']);
    t.same(await dns.addresses('v6only.example.test'), ['2001:db8::1']);
  });

  await t.test('records can be removed', async (t) => {
    server.setTxt('gone.example.test', ['soon']);
    server.setMx('gone.example.test', [{ exchange: 'mx.example.test', priority: 5 }]);
    server.remove('gone.example.test', 'TXT');
    t.same(await dns.txt('gone.example.test'), []);
    t.equal((await dns.mx('gone.example.test')).length, 1);
    server.remove('gone.example.test');
    t.same(await dns.mx('gone.example.test'), []);
  });
});

t.test('absences are empty answers, not errors', async (t) => {
  const server = await startDnsServer(t);
  const dns = createResolver([server.address], FAST);
  server.setA('mail.example.test', ['192.0.2.25']);
  server.setTxt('sel._domainkey.example.test', ['v=DKIM1; p=']);

  t.same(await dns.txt('nowhere.example.test'), [], 'NXDOMAIN');
  t.same(await dns.mx('nowhere.example.test'), [], 'NXDOMAIN');
  t.same(await dns.addresses('nowhere.example.test'), [], 'NXDOMAIN');
  t.same(await dns.txt('mail.example.test'), [], 'the name exists, without TXT (NODATA)');
  t.same(await dns.mx('mail.example.test'), [], 'the name exists, without MX (NODATA)');
  t.same(await dns.txt('_domainkey.example.test'), [], 'an empty non-terminal');
});

t.test('failures are DnsLookupErrors, never empty answers', async (t) => {
  const server = await startDnsServer(t);
  const dns = createResolver([server.address], FAST);
  server.setTxt('example.test', ['v=spf1 -all']);

  await t.test('a server that never replies times out', async (t) => {
    server.setMode('timeout');
    t.teardown(() => server.setMode('answer'));
    const err = await lookUpError(dns.txt('example.test'));
    t.equal(err.code, 'ETIMEOUT', 'the resolver gave up at its timeout');
    t.equal(err.name, 'DnsLookupError');
    t.equal(err.hostname, 'example.test');
    t.equal(err.server, server.address);
    t.match(err.message, /example\.test/);
    t.match(err.message, /ETIMEOUT/);
    t.equal((await lookUpError(dns.addresses('example.test'))).code, 'ETIMEOUT', 'addresses() too');
  });

  await t.test('SERVFAIL', async (t) => {
    server.setMode('servfail');
    t.teardown(() => server.setMode('answer'));
    const err = await lookUpError(dns.mx('example.test'));
    t.equal(err.code, 'ESERVFAIL');
    t.match(err.message, /MX look-up for example\.test/);
  });

  await t.test('the server answers again once it recovers', async (t) => {
    t.same(await dns.txt('example.test'), ['v=spf1 -all']);
  });

  await t.test('nothing listening at the address', async (t) => {
    const nobody = `127.0.0.1:${await freePort()}`;
    const err = await lookUpError(createResolver([nobody], FAST).txt('example.test'));
    // Loopback answers with ICMP port unreachable at once; where that is filtered it is a timeout instead.
    t.match(err.code, /^(ECONNREFUSED|ETIMEOUT)$/);
    t.equal(err.server, nobody);
  });

  await t.test('a server answering garbage: a failure within the timeout, not a crash or a hang', async (t) => {
    const { createSocket } = await import('node:dgram');
    const rogue = createSocket('udp4');
    // Each reply echoes the query's id (so the resolver takes it as the answer) followed by bytes that are no DNS message.
    rogue.on('message', (query, peer) =>
      rogue.send(Buffer.concat([query.subarray(0, 2), Buffer.from('\xff\xff garbage, not a DNS answer', 'latin1')]), peer.port, peer.address),
    );
    await new Promise<void>((resolve) => rogue.bind(0, '127.0.0.1', () => resolve()));
    t.teardown(() => rogue.close());
    const err = await lookUpError(createResolver([`127.0.0.1:${rogue.address().port}`], FAST).addresses('example.test'));
    t.match(err.code, /^E[A-Z]+$/, `failed with ${err.code}`);
  });
});

t.test('resolverFor asks only its own server', async (t) => {
  const [one, two] = await Promise.all([startDnsServer(t), startDnsServer(t)]);
  one.setTxt('_dmarc.example.test', ['v=DMARC1; p=none']);
  two.setTxt('_dmarc.example.test', ['v=DMARC1; p=reject']);
  t.same(await resolverFor(one.address, FAST).txt('_dmarc.example.test'), ['v=DMARC1; p=none']);
  t.same(await resolverFor(two.address, FAST).txt('_dmarc.example.test'), ['v=DMARC1; p=reject']);

  two.setMode('timeout');
  t.same(await resolverFor(one.address, FAST).txt('_dmarc.example.test'), ['v=DMARC1; p=none'], 'one server down does not touch the other');
  const err = await lookUpError(resolverFor(two.address, FAST).txt('_dmarc.example.test'));
  t.equal(err.server, two.address);
});

t.test('an empty server list is refused up front rather than failing every look-up', async (t) => {
  t.throws(() => createResolver([], FAST), /empty server list/);
});
