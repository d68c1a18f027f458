// Routing a recipient domain: relay, MX hosts by preference, implicit MX, null MX, and DNS failures that must not read as "no record".
import t from 'tap';
import { hopAddresses, parseHostPort, resolveRoute } from '../../../../mta/outbound/deliver/route.js';
import { DnsLookupError, type DnsResolver, type MxRecord } from '../../../../shared/kernel/dns.js';

/** A resolver over fixed records; a name listed in `failing` answers like a SERVFAIL. */
function resolver(zone: { mx?: Record<string, MxRecord[]>; a?: Record<string, string[]>; failing?: string[] }): DnsResolver & { asked: string[] } {
  const asked: string[] = [];
  const fail = (name: string) => {
    if (zone.failing?.includes(name)) throw new DnsLookupError('ESERVFAIL', name, '127.0.0.1', `DNS look-up for ${name} failed: ESERVFAIL`);
  };
  return {
    asked,
    txt: async () => [],
    mx: async (name) => {
      asked.push(`MX ${name}`);
      fail(name);
      return zone.mx?.[name] ?? [];
    },
    addresses: async (name) => {
      asked.push(`A ${name}`);
      fail(name);
      return zone.a?.[name] ?? [];
    },
  };
}

const options = { relay: undefined, port: 25 };

t.test('MX hosts in preference order, addresses looked up only when a host is reached', async (t) => {
  const dns = resolver({
    mx: {
      'dest.example': [
        { exchange: 'mx2.dest.example', priority: 20 },
        { exchange: 'mx1.dest.example', priority: 10 },
      ],
    },
    a: { 'mx1.dest.example': ['192.0.2.1'] },
  });
  const route = await resolveRoute(dns, 'dest.example', options);
  t.same(route, {
    kind: 'hops',
    hops: [
      { host: 'mx1.dest.example', port: 25 },
      { host: 'mx2.dest.example', port: 25 },
    ],
  });
  t.same(dns.asked, ['MX dest.example']);
  if (route.kind !== 'hops') return;
  t.same(await hopAddresses(dns, route.hops[0]!), ['192.0.2.1']);
  t.same(await hopAddresses(dns, route.hops[1]!), [], 'a host without addresses yields none (the caller moves on)');
});

t.test('equal preferences come in random order, below better ones', async (t) => {
  const dns = resolver({
    mx: {
      'd.example': [
        { exchange: 'a.d.example', priority: 5 },
        { exchange: 'b.d.example', priority: 5 },
        { exchange: 'c.d.example', priority: 1 },
      ],
    },
  });
  /** Hands out the given draws in order (one per record, in the order DNS gave them). */
  const draws =
    (...values: number[]) =>
    () =>
      values.shift() ?? 0;
  const order = async (random: () => number) => {
    const route = await resolveRoute(dns, 'd.example', { ...options, random });
    return route.kind === 'hops' ? route.hops.map((h) => h.host[0]).join('') : '';
  };
  t.equal(await order(draws(0.1, 0.9, 0.5)), 'cab');
  t.equal(await order(draws(0.9, 0.1, 0.5)), 'cba');
  t.equal(await order(draws(0.9, 0.1, 0)), 'cba', 'a draw never lifts a record above a better preference');
});

t.test('no MX: the domain itself, if it has an address; neither: a permanent failure', async (t) => {
  const dns = resolver({ a: { 'plain.example': ['192.0.2.7', '2001:db8::7'] } });
  t.same(await resolveRoute(dns, 'plain.example', options), {
    kind: 'hops',
    hops: [{ host: 'plain.example', port: 25, addresses: ['192.0.2.7', '2001:db8::7'] }],
  });
  const none = await resolveRoute(dns, 'nothing.example', options);
  t.match(none, { kind: 'fail', outcome: { kind: 'unroutable', enhanced: '5.1.2' } });
});

t.test('a null MX is a permanent 5.1.10 failure', async (t) => {
  for (const exchange of ['', '.']) {
    const route = await resolveRoute(resolver({ mx: { 'nomail.example': [{ exchange, priority: 0 }] } }), 'nomail.example', options);
    t.match(route, { kind: 'fail', outcome: { kind: 'unroutable', enhanced: '5.1.10', text: /null MX/ } });
  }
});

t.test('a DNS failure is temporary, never "no MX"', async (t) => {
  const route = await resolveRoute(resolver({ failing: ['broken.example'] }), 'broken.example', options);
  t.match(route, { kind: 'fail', outcome: { kind: 'dns', text: /ESERVFAIL/ } });
  const implicit = resolver({ failing: ['half.example'], mx: {} });
  implicit.mx = async () => [];
  t.match(await resolveRoute(implicit, 'half.example', options), { kind: 'fail', outcome: { kind: 'dns' } });
  await t.rejects(hopAddresses(resolver({ failing: ['mx.x.example'] }), { host: 'mx.x.example', port: 25 }), DnsLookupError);
});

t.test('a relay replaces MX routing; a named relay is left to the system resolver', async (t) => {
  const dns = resolver({});
  t.same(await resolveRoute(dns, 'dest.example', { relay: '127.0.0.1:2525', port: 25 }), {
    kind: 'hops',
    hops: [{ host: '127.0.0.1', port: 2525, addresses: ['127.0.0.1'] }],
  });
  const named = await resolveRoute(dns, 'dest.example', { relay: 'smarthost.internal', port: 25 });
  t.same(named, { kind: 'hops', hops: [{ host: 'smarthost.internal', port: 25, systemResolved: true }] });
  if (named.kind === 'hops') t.same(await hopAddresses(dns, named.hops[0]!), ['smarthost.internal']);
  t.same(dns.asked, [], 'no DNS look-up for a relay');
  t.same(parseHostPort('[::1]:2525', 25), { host: '::1', port: 2525 });
  t.same(parseHostPort('::1', 25), { host: '::1', port: 25 });
  t.same(parseHostPort('relay.example', 587), { host: 'relay.example', port: 587 });
});
