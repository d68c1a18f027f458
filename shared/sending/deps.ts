// What the send use-case needs (database, job queues, clock, resolver, VERP and link keys, its batched writer, look-ups and counters, and the slot for this
// process's delivery workers); built once per process.
import type { Config } from '../config/index.js';
import type { Clock } from '../kernel/clock.js';
import type { Sql } from '../db/connection.js';
import type { DnsResolver } from '../kernel/dns.js';
import type { Logger } from '../kernel/log.js';
import type { Boss } from '../jobs/boss.js';
import type { SealedBox } from '../kernel/secrets/sealed-box.js';
import type { TemplateRenderer } from './templates/renderer.js';
import type { Metrics } from '../operations/metrics/metrics.js';
import { createSendCounters, type SendCounters } from './counters.js';
import { createEspHolds, type EspHolds } from './esp-holds.js';
import type { GateDeps } from './gates/types.js';
import { createSendLookups, type SendLookups } from './lookups.js';
import { LocalDelivery } from './local-delivery.js';
import { createSendWriter, type SendWriter } from './send-writer.js';
import { SigningKeyCache } from './signing-keys.js';

export interface SendingDeps {
  sql: Sql;
  boss: Boss;
  config: Config;
  clock: Clock;
  log: Logger;
  /** MAILPATH_DNS_SERVERS: MX look-ups and the bounce-risk check. */
  dns: DnsResolver;
  /** Signs VERP bounce addresses. */
  verpKey: Buffer;
  /** Signs the links put in mail: open pixel, click redirects, unsubscribe (shared/engagement/tracking/tokens.ts). */
  linkKey: Buffer;
  signingKeys: SigningKeyCache;
  /** Commits accepted sends in shared transactions (group commit). */
  writer: SendWriter;
  /** This process's delivery workers (when it runs the outbound role): the writer hands them what they have room for. */
  local: LocalDelivery;
  /** The send path's read-only look-ups, batched across concurrent sends. */
  lookups: SendLookups;
  /** Quota and warm-up counters, taken once per tick for all concurrent sends. */
  counters: SendCounters;
  /** The automatic per-provider suppressions in force (cached a few seconds). */
  espHolds: EspHolds;
  /** The process's metrics (accepted messages); absent in tests that build the deps by hand. */
  metrics?: Metrics;
  /** Renders tenants' Liquid off the event loop (the process's render threads, main/render-pool.ts). */
  renderer: TemplateRenderer;
}

/** What the send path's batching objects are made from: the process's database, job queues, clock, resolver and keys. */
export type SendingBase = Pick<SendingDeps, 'sql' | 'boss' | 'config' | 'clock' | 'log' | 'dns' | 'verpKey' | 'linkKey' | 'metrics' | 'renderer'> & {
  vault: SealedBox;
};

/** The send path's own objects; each batches across every caller of the process, so build them once. */
export function createSendingDeps(base: SendingBase): SendingDeps {
  const { vault, ...rest } = base;
  const local = new LocalDelivery();
  return {
    ...rest,
    signingKeys: new SigningKeyCache(base.sql, vault),
    local,
    writer: createSendWriter({ sql: base.sql, log: base.log, clock: base.clock, local, leaseSeconds: base.config.delivery.workers.job_expire_seconds }),
    lookups: createSendLookups(base.sql, base.log),
    counters: createSendCounters(base.sql, base.log, base.config.warmup.initial_tier),
    espHolds: createEspHolds(base.sql, base.clock),
  };
}

/** What the gates read, from the send path's objects (the acceptance and the delivery worker's wake-up alike). */
export const gateDepsOf = (deps: Pick<SendingDeps, 'sql' | 'config' | 'lookups' | 'counters' | 'espHolds'>): GateDeps => ({
  db: deps.sql,
  warmup: deps.config.warmup,
  lookups: deps.lookups,
  counters: deps.counters,
  espHolds: deps.espHolds,
});
