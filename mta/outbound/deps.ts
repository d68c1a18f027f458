// What the outbound path needs (database, queue, clock, resolver, sealing box, VERP key), built once per process.
import type { Config } from '../../shared/config.js';
import type { Clock } from '../../shared/clock.js';
import type { Sql } from '../../shared/db/connection.js';
import type { DnsResolver } from '../../shared/dns.js';
import type { DomainDeps } from '../../shared/domains/deps.js';
import type { Logger } from '../../shared/log.js';
import type { Boss } from '../../shared/queue.js';
import { loadMasterKey } from '../../shared/secrets/master-key.js';
import type { SealedBox } from '../../shared/secrets/sealed-box.js';
import { verpKey } from '../../shared/sends/verp.js';
import { ensureDeliveryQueue } from './queue.js';
import { createSendCounters, type SendCounters } from './counters.js';
import { createSendLookups, type SendLookups } from './lookups.js';
import { createSendWriter, type SendWriter } from './send-writer.js';
import { SigningKeyCache } from './signing-keys.js';

export interface OutboundDeps {
  sql: Sql;
  boss: Boss;
  config: Config;
  clock: Clock;
  log: Logger;
  /** MAILPATH_DNS_SERVERS: MX look-ups and the bounce-risk check. */
  dns: DnsResolver;
  vault: SealedBox;
  /** Signs VERP bounce addresses. */
  verpKey: Buffer;
  signingKeys: SigningKeyCache;
  /** Commits accepted sends in shared transactions (group commit). */
  writer: SendWriter;
  /** The send path's read-only look-ups, batched across concurrent sends. */
  lookups: SendLookups;
  /** Quota and warm-up counters, taken once per tick for all concurrent sends. */
  counters: SendCounters;
}

export async function createOutboundDeps(domains: DomainDeps, boss: Boss): Promise<OutboundDeps> {
  await ensureDeliveryQueue(domains.sql, { expireInSeconds: domains.config.delivery.workers.job_expire_seconds });
  return {
    sql: domains.sql,
    boss,
    config: domains.config,
    clock: domains.clock,
    log: domains.log,
    dns: domains.dns,
    vault: domains.vault,
    verpKey: verpKey(await loadMasterKey(domains.config)),
    signingKeys: new SigningKeyCache(domains.sql, domains.vault),
    writer: createSendWriter(domains.sql, boss, domains.log),
    lookups: createSendLookups(domains.sql),
    counters: createSendCounters(domains.sql, domains.log),
  };
}
