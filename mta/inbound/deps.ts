// What the MX server and its plugins need (database, queue, clock, resolver, VERP key), built once per process.
import type { Config } from '../../shared/config.js';
import type { Clock } from '../../shared/clock.js';
import type { Sql } from '../../shared/db/connection.js';
import { createResolver, type DnsResolver } from '../../shared/dns.js';
import { ensureInboundQueues } from '../../shared/inbound/jobs.js';
import type { Logger } from '../../shared/log.js';
import type { Boss } from '../../shared/queue.js';
import { loadMasterKey } from '../../shared/secrets/master-key.js';
import { verpKey } from '../../shared/sends/verp.js';

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
}

export async function createMxDeps(config: Config, sql: Sql, log: Logger, boss: Boss, clock: Clock): Promise<MxDeps> {
  await ensureInboundQueues(sql, { expireInSeconds: config.delivery.workers.job_expire_seconds });
  return {
    config,
    sql,
    boss,
    clock,
    log,
    dns: createResolver(config.dnsServers, { timeoutMs: config.dns.timeout_ms, tries: config.dns.tries }),
    verpKey: verpKey(await loadMasterKey(config)),
  };
}
