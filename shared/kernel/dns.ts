// The injectable DNS resolver every look-up goes through, so tests can point it at their own server.
import { promises as dnsPromises } from 'node:dns';

export interface MxRecord {
  /** Lower-cased, without the trailing dot; '' for a null MX (RFC 7505). */
  exchange: string;
  priority: number;
}

export interface DnsResolver {
  /**
   * TXT records at name; each record's character-strings joined with no separator (RFC 7208 §3.3, RFC 6376 §3.6.2.2). [] when the name or the type does not
   * exist (NXDOMAIN / NODATA).
   */
  txt(name: string): Promise<string[]>;
  /** MX records at name; [] when none. */
  mx(name: string): Promise<MxRecord[]>;
  /** A and AAAA addresses of name; [] when none. */
  addresses(name: string): Promise<string[]>;
}

/** A look-up that could not give an answer (timeout, SERVFAIL, refused, connection error): never to be read as "record absent". */
export class DnsLookupError extends Error {
  override name = 'DnsLookupError';
  constructor(
    readonly code: string,
    readonly hostname: string,
    readonly server: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

export interface ResolverOptions {
  timeoutMs: number;
  tries: number;
}

// Only these say "the DNS answered, and there is nothing": everything else means we do not know.
const ABSENT_CODES = new Set(['ENOTFOUND', 'ENODATA']);

/** servers: list of "ip" or "ip:port" or "[ipv6]:port"; undefined = the system's resolvers. */
export function createResolver(servers: readonly string[] | undefined, options: ResolverOptions): DnsResolver {
  // c-ares with no servers fails every look-up with an unhelpful UNKNOWN_ARES_ERROR: say why, once, up front.
  if (servers !== undefined && servers.length === 0) throw new TypeError('createResolver: empty server list (pass undefined for the system resolvers)');
  const resolver = new dnsPromises.Resolver({ timeout: options.timeoutMs, tries: options.tries });
  if (servers !== undefined) resolver.setServers([...servers]);
  const serverLabel = servers === undefined ? undefined : servers.join(', ');

  async function lookUp<T>(type: string, name: string, query: (hostname: string) => Promise<T[]>): Promise<T[]> {
    const hostname = name.replace(/\.$/, '');
    try {
      return await query(hostname);
    } catch (err) {
      const code = typeof (err as { code?: unknown }).code === 'string' ? (err as { code: string }).code : 'EUNKNOWN';
      if (ABSENT_CODES.has(code)) return [];
      const via = serverLabel === undefined ? 'the system resolvers' : serverLabel;
      throw new DnsLookupError(code, hostname, serverLabel, `DNS ${type} look-up for ${hostname} via ${via} failed: ${code}`);
    }
  }

  return {
    txt: (name) => lookUp('TXT', name, async (host) => (await resolver.resolveTxt(host)).map((strings) => strings.join(''))),
    mx: (name) =>
      lookUp('MX', name, async (host) =>
        (await resolver.resolveMx(host)).map((r) => ({
          exchange: r.exchange.toLowerCase().replace(/\.$/, ''),
          priority: r.priority,
        })),
      ),
    addresses: async (name) => {
      const [v4, v6] = await Promise.all([lookUp('A', name, (host) => resolver.resolve4(host)), lookUp('AAAA', name, (host) => resolver.resolve6(host))]);
      return [...v4, ...v6];
    },
  };
}

/** A resolver that asks exactly one server, so several public resolvers can be compared answer by answer. */
export function resolverFor(server: string, options: ResolverOptions): DnsResolver {
  return createResolver([server], options);
}
