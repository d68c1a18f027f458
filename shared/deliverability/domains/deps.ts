// What the domain services need: database, config, clock, the resolvers (injectable, so tests point them at loopback) and the sealing box; the entry point
// builds them once (main/services.ts).
import type { Config } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import type { Logger } from '../../kernel/log.js';
import type { DnsResolver } from '../../kernel/dns.js';
import type { SealedBox } from '../../kernel/secrets/sealed-box.js';

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
