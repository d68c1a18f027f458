// What the domain services need: database, config, clock, the resolvers (injectable, so tests point them at loopback) and the sealing box.
import type { Config } from '../config.js';
import type { Clock } from '../clock.js';
import type { Sql } from '../db/connection.js';
import type { Logger } from '../log.js';
import { createResolver, resolverFor, type DnsResolver } from '../dns.js';
import { loadMasterKey } from '../secrets/master-key.js';
import { SealedBox } from '../secrets/sealed-box.js';

export interface PublicResolver {
  /** As configured in MAILPATH_PUBLIC_RESOLVERS (ip or ip:port). */
  server: string;
  dns: DnsResolver;
}

export interface DomainDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
  log: Logger;
  /** MAILPATH_DNS_SERVERS (or the system's): verification look-ups. */
  dns: DnsResolver;
  /** Each of MAILPATH_PUBLIC_RESOLVERS on its own: a rotation activates only when every one sees the new key. */
  publicResolvers: PublicResolver[];
  vault: SealedBox;
}

export async function createDomainDeps(config: Config, sql: Sql, log: Logger, clock: Clock): Promise<DomainDeps> {
  const options = { timeoutMs: config.dns.timeout_ms, tries: config.dns.tries };
  return {
    sql,
    config,
    clock,
    log,
    dns: createResolver(config.dnsServers, options),
    publicResolvers: config.publicResolvers.map((server) => ({ server, dns: resolverFor(server, options) })),
    vault: new SealedBox(await loadMasterKey(config)),
  };
}
