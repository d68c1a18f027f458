// The resolver mailauth calls: record shapes over shared/kernel/dns.ts, ENODATA for empty answers, the answer cache (bounded, expiring) and failures never
// cached.
import t from 'tap';
import { createResolver } from '../../../shared/kernel/dns.js';
import { mailauthResolver } from '../../../mta/inbound/auth-resolver.js';
import { startDnsServer } from '../../helpers/dns-server.js';

const server = await startDnsServer(t);
const dns = createResolver([server.address], { timeoutMs: 300, tries: 1 });
server.setTxt('spf.example', ['v=spf1 -all']);
server.setMx('spf.example', [{ exchange: 'mx.spf.example', priority: 10 }]);
server.setA('spf.example', ['192.0.2.1', '2001:db8::1']);

t.test('answers in the shapes mailauth expects; an empty answer is ENODATA, other types are unsupported', async (t) => {
  const resolve = mailauthResolver(dns, { ttlMs: 0, maxEntries: 10 });
  t.same(await resolve('spf.example', 'TXT'), [['v=spf1 -all']], 'each TXT record as its strings');
  t.same(await resolve('spf.example', 'MX'), [{ exchange: 'mx.spf.example', priority: 10 }]);
  t.same(await resolve('spf.example', 'A'), ['192.0.2.1']);
  t.same(await resolve('spf.example', 'AAAA'), ['2001:db8::1']);
  await t.rejects(resolve('nothing.example', 'TXT'), { code: 'ENODATA' });
  await t.rejects(resolve('1.2.0.192.in-addr.arpa', 'PTR'), { code: 'ENODATA' }, 'no PTR look-ups: the SPF ptr mechanism never matches');
});

t.test('cached answers are reused until they expire, empty answers too; the oldest entry goes past the bound', async (t) => {
  let now = 1_000_000;
  const resolve = mailauthResolver(dns, { ttlMs: 60_000, maxEntries: 2, now: () => now });
  const before = server.queries();
  await resolve('spf.example', 'TXT');
  await resolve('spf.example', 'TXT');
  await t.rejects(resolve('nothing.example', 'TXT'), { code: 'ENODATA' });
  await t.rejects(resolve('nothing.example', 'TXT'), { code: 'ENODATA' });
  t.equal(server.queries() - before, 2, 'one query per record while cached');
  server.setTxt('spf.example', ['v=spf1 ip4:192.0.2.9 -all']);
  t.same(await resolve('spf.example', 'TXT'), [['v=spf1 -all']], 'still the cached answer');
  now += 60_001;
  t.same(await resolve('spf.example', 'TXT'), [['v=spf1 ip4:192.0.2.9 -all']], 'a changed record is seen once the entry expired');
  // Two more names push the oldest out (at most two entries).
  server.setTxt('a.example', ['a']);
  server.setTxt('b.example', ['b']);
  await resolve('a.example', 'TXT');
  await resolve('b.example', 'TXT');
  const mark = server.queries();
  await resolve('spf.example', 'TXT');
  t.equal(server.queries() - mark, 1, 'the evicted entry is asked again');
});

t.test('failures are never cached; concurrent asks share one look-up', async (t) => {
  const resolve = mailauthResolver(dns, { ttlMs: 60_000, maxEntries: 100 });
  server.setMode('servfail');
  await t.rejects(resolve('spf.example', 'MX'), { name: 'DnsLookupError', code: 'ESERVFAIL' });
  server.setMode('answer');
  t.same(await resolve('spf.example', 'MX'), [{ exchange: 'mx.spf.example', priority: 10 }], 'asked again once the server recovered');
  server.setTxt('shared.example', ['x']);
  const before = server.queries();
  const answers = await Promise.all(Array.from({ length: 10 }, () => resolve('shared.example', 'TXT')));
  t.same(
    answers,
    Array.from({ length: 10 }, () => [['x']]),
  );
  t.equal(server.queries() - before, 1, 'one query for ten concurrent asks');
});
