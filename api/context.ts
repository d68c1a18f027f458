// What the API needs from the running service (config, database, clock, shared services), and how it is built.
import type { Config } from '../shared/config.js';
import { systemClock, type Clock } from '../shared/clock.js';
import type { Sql } from '../shared/db/connection.js';
import type { Logger } from '../shared/log.js';
import { SessionTokens } from '../shared/auth/jwt.js';
import { CredentialResolver } from '../shared/auth/credentials.js';
import { KeyUsageRecorder } from '../shared/keys/last-used.js';
import { RateLimiter } from '../shared/ratelimit/limiter.js';
import { TenantLimits } from '../shared/ratelimit/tenant-limits.js';
import { createDomainDeps, type DomainDeps } from '../shared/domains/deps.js';
import type { Boss } from '../shared/queue.js';
import { createOutboundDeps, type OutboundDeps } from '../mta/outbound/deps.js';
import { SystemMail } from '../shared/system-mail/mailer.js';

export interface ApiContext {
  config: Config;
  sql: Sql;
  log: Logger;
  clock: Clock;
  tokens: SessionTokens;
  credentials: CredentialResolver;
  keyUsage: KeyUsageRecorder;
  rateLimiter: RateLimiter;
  tenantLimits: TenantLimits;
  /** Domain services and scheduled workers (resolvers, sealing box); run-now calls workers with it. */
  domains: DomainDeps;
  /** The outbound path (gates, signing, the delivery queue) the send routes hand messages to. */
  outbound: OutboundDeps;
  /** Platform e-mails (password reset, invites) through the outbound path as the super-admin tenant, or logged. */
  systemMail: SystemMail;
  /** Flushes pending counters and usage; call before closing the database. */
  close(): Promise<void>;
}

export async function createApiContext(config: Config, sql: Sql, log: Logger, boss: Boss, clock: Clock = systemClock): Promise<ApiContext> {
  const tokens = await SessionTokens.create(config);
  const limits = config.limits.rate_limits;
  const rateLimiter = new RateLimiter(sql, log, limits.sync_interval_ms, () => clock.now().getTime());
  rateLimiter.start();
  const keyUsage = new KeyUsageRecorder(sql, log, config.auth.key_last_used_write_interval_seconds);
  const domains = await createDomainDeps(config, sql, log, clock);
  const outbound = await createOutboundDeps(domains, boss);
  const systemMail = new SystemMail(outbound);
  return {
    config,
    sql,
    log,
    clock,
    tokens,
    credentials: new CredentialResolver(sql, tokens, config, clock),
    keyUsage,
    rateLimiter,
    tenantLimits: new TenantLimits(sql, limits.tenant_default_per_sec, limits.override_cache_ms),
    domains,
    outbound,
    systemMail,
    async close() {
      await systemMail.drain();
      await Promise.all([rateLimiter.close(), keyUsage.close()]);
    },
  };
}
