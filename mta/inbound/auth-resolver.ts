// The resolver mailauth's SPF, DKIM and DMARC checks call (dns.resolve-shaped), over the injectable resolver of shared/kernel/dns.ts, with a short cache of
// answers.
import { isIPv4, isIPv6 } from 'node:net';
import type { DnsResolver } from '../../shared/kernel/dns.js';

/** What mailauth calls: records of `type` at `name`, or an error whose code says why there are none. */
export type MailauthResolver = (name: string, type: string) => Promise<unknown[]>;

export interface CacheOptions {
  /** How long an answer is kept (ms); 0 keeps nothing. */
  ttlMs: number;
  maxEntries: number;
  now?: () => number;
}

/** "The DNS answered and there is nothing": mailauth tells this from a failure by the code (a void look-up, RFC 7208 §4.6.4). */
function noData(type: string, name: string): Error {
  return Object.assign(new Error(`no ${type} records at ${name}`), { code: 'ENODATA' });
}

/**
 * Answers (empty ones included) are cached for `ttlMs`; failures (timeouts, SERVFAIL) are not, so
 * a DNS outage never outlives itself. Concurrent asks for the same record share one look-up.
 * shared/kernel/dns.ts has no PTR look-up: the deprecated SPF `ptr` mechanism therefore never matches.
 */
export function mailauthResolver(dns: DnsResolver, cache: CacheOptions): MailauthResolver {
  const now = cache.now ?? Date.now;
  const answers = new Map<string, { expires: number; records: unknown[] }>();
  const pending = new Map<string, Promise<unknown[]>>();

  const lookUp = async (type: string, name: string): Promise<unknown[]> => {
    switch (type) {
      case 'TXT':
        // mailauth expects each record as its character-strings; shared/kernel/dns.ts has joined them already.
        return (await dns.txt(name)).map((record) => [record]);
      case 'MX':
        return dns.mx(name);
      case 'A':
        return (await dns.addresses(name)).filter((a) => isIPv4(a));
      case 'AAAA':
        return (await dns.addresses(name)).filter((a) => isIPv6(a));
      default:
        return [];
    }
  };

  return async (name, rrtype) => {
    const type = rrtype.toUpperCase();
    const key = `${type} ${name.toLowerCase().replace(/\.$/, '')}`;
    const cached = answers.get(key);
    let records: unknown[];
    if (cached && cached.expires > now()) {
      records = cached.records;
    } else {
      let inFlight = pending.get(key);
      if (!inFlight) {
        inFlight = lookUp(type, name).finally(() => pending.delete(key));
        pending.set(key, inFlight);
      }
      records = await inFlight;
      if (cache.ttlMs > 0) {
        answers.delete(key);
        answers.set(key, { expires: now() + cache.ttlMs, records });
        // The oldest entry goes first (a Map iterates in insertion order).
        while (answers.size > cache.maxEntries) answers.delete(answers.keys().next().value!);
      }
    }
    if (records.length === 0) throw noData(type, name);
    return records;
  };
}
