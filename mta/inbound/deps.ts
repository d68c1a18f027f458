// What the MX server and its plugins need (database, job queues, clock, resolver, VERP and link keys): the part of the process's services the mx role takes.
import type { Config } from '../../shared/config/index.js';
import type { Clock } from '../../shared/kernel/clock.js';
import type { Sql } from '../../shared/db/connection.js';
import type { DnsResolver } from '../../shared/kernel/dns.js';
import type { Logger } from '../../shared/kernel/log.js';
import type { Boss } from '../../shared/jobs/boss.js';
import type { Metrics } from '../../shared/operations/metrics/metrics.js';

export interface MxDeps {
  config: Config;
  sql: Sql;
  boss: Boss;
  clock: Clock;
  log: Logger;
  /** MAILPATH_DNS_SERVERS: SPF, DKIM and DMARC look-ups of senders. */
  dns: DnsResolver;
  /** Checks the signature of VERP bounce addresses (the outbound path signs them with the same key). */
  verpKey: Buffer;
  /** Checks the tokens of mailto unsubscribe addresses (the same key signs them in List-Unsubscribe). */
  linkKey: Buffer;
  /** The process's metrics (sessions); absent in tests that build the deps by hand. */
  metrics?: Metrics;
}
