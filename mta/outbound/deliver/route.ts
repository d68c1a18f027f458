// Where mail for a recipient domain goes: the configured relay, else the domain's MX hosts in preference order (RFC 5321 §5.1), each host's addresses looked
// up when it is reached.
import { isIP } from 'node:net';
import type { DnsResolver } from '../../../shared/kernel/dns.js';
import { DnsLookupError } from '../../../shared/kernel/dns.js';
import type { SmtpOutcome } from '../../../shared/delivery/classify.js';

/** One host to try, in order. */
export interface Hop {
  /** The MX (or relay) host name, or an address; the TLS server name when it is a name. */
  host: string;
  port: number;
  /** Known up front (implicit MX, an address) or looked up when the hop is reached. */
  addresses?: string[];
  /**
   * Leave the name to the system resolver: an operator's relay is often known only to the
   * local network (/etc/hosts, a container network), which the public-DNS resolver cannot see.
   */
  systemResolved?: boolean;
}

export type Route = { kind: 'hops'; hops: Hop[] } | { kind: 'fail'; outcome: SmtpOutcome };

/** host:port, [v6]:port, or a bare host (the default port). */
export function parseHostPort(value: string, defaultPort: number): { host: string; port: number } {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(value);
  if (bracketed) return { host: bracketed[1]!, port: bracketed[2] ? Number(bracketed[2]) : defaultPort };
  const colon = value.lastIndexOf(':');
  if (colon > 0 && isIP(value) === 0) return { host: value.slice(0, colon), port: Number(value.slice(colon + 1)) };
  return { host: value, port: defaultPort };
}

/** Equal preferences in random order, so their load is shared (RFC 5321 §5.1). */
function byPreference<T extends { priority: number }>(records: readonly T[], random: () => number): T[] {
  return records
    .map((r) => ({ r, tie: random() }))
    .sort((a, b) => a.r.priority - b.r.priority || a.tie - b.tie)
    .map((x) => x.r);
}

function temporary(err: unknown): Route {
  const text = err instanceof DnsLookupError ? err.message : `DNS look-up failed: ${(err as Error).message}`;
  return { kind: 'fail', outcome: { kind: 'dns', text } };
}

/**
 * The route for `domain`. A null MX (RFC 7505) or a domain with neither MX nor address is a
 * permanent failure; a look-up that could not answer is a temporary one (never "absent").
 */
export async function resolveRoute(
  dns: DnsResolver,
  domain: string,
  options: { relay: string | undefined; port: number; random?: () => number },
): Promise<Route> {
  if (options.relay !== undefined) {
    const relay = parseHostPort(options.relay, 25);
    return { kind: 'hops', hops: [{ ...relay, ...(isIP(relay.host) ? { addresses: [relay.host] } : { systemResolved: true }) }] };
  }
  let records;
  try {
    records = await dns.mx(domain);
  } catch (err) {
    return temporary(err);
  }
  if (records.some((r) => r.exchange === '' || r.exchange === '.')) {
    return { kind: 'fail', outcome: { kind: 'unroutable', enhanced: '5.1.10', text: `5.1.10 ${domain} does not accept mail (null MX, RFC 7505)` } };
  }
  if (records.length > 0) {
    const hosts = byPreference(records, options.random ?? Math.random);
    return { kind: 'hops', hops: hosts.map((r) => ({ host: r.exchange, port: options.port, ...(isIP(r.exchange) ? { addresses: [r.exchange] } : {}) })) };
  }
  // No MX: the domain itself is the implicit MX, if it has an address.
  let addresses;
  try {
    addresses = await dns.addresses(domain);
  } catch (err) {
    return temporary(err);
  }
  if (addresses.length === 0) {
    return {
      kind: 'fail',
      outcome: { kind: 'unroutable', enhanced: '5.1.2', text: `5.1.2 ${domain} has no MX and no address record: it cannot receive mail` },
    };
  }
  return { kind: 'hops', hops: [{ host: domain, port: options.port, addresses }] };
}

/** The addresses to connect to for a hop; a look-up that fails is thrown as the DnsLookupError it is. */
export async function hopAddresses(dns: DnsResolver, hop: Hop): Promise<string[]> {
  if (hop.addresses) return hop.addresses;
  if (hop.systemResolved) return [hop.host];
  return dns.addresses(hop.host);
}
