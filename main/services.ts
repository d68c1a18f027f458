// The process-wide services, built once at start-up: every role takes what it needs from this one object (each role's deps type is a part of it).
import { ProviderClassifier } from '../shared/engagement/analytics/provider-classifier.js';
import type { ApiContext } from '../api/context.js';
import type { MxDeps } from '../mta/inbound/deps.js';
import type { DeliveryDeps } from '../mta/outbound/deliver/start.js';
import type { SubmissionDeps } from '../mta/submission/server.js';
import { testSendWebhook } from '../jobs/inbound-webhooks/test-send.js';
import { postSigned } from '../jobs/webhook-post.js';
import type { WebhookDeps } from '../jobs/inbound-webhooks/worker.js';
import { pop3Opener } from '../jobs/bounce-mailboxes/connect.js';
import { CredentialResolver } from '../shared/accounts/auth/credentials.js';
import { ensureFanoutJobs } from '../shared/campaigns/fanout-jobs.js';
import { SessionTokens } from '../shared/accounts/auth/jwt.js';
import type { Clock } from '../shared/kernel/clock.js';
import type { Config } from '../shared/config/index.js';
import type { Sql } from '../shared/db/connection.js';
import { createResolver, resolverFor } from '../shared/kernel/dns.js';
import { ensureImportJobs } from '../shared/audiences/imports/jobs.js';
import { ensureInboundJobs } from '../shared/inbound/jobs.js';
import type { Boss } from '../shared/jobs/boss.js';
import { KeyUsageRecorder } from '../shared/accounts/keys/last-used.js';
import { ensureChatJobs } from '../shared/operations/notify/chat.js';
import { ensureImpersonationAuditJobs } from '../shared/accounts/impersonation/audit-jobs.js';
import type { Logger } from '../shared/kernel/log.js';
import { RateLimiter } from '../shared/limits/rate-limits/limiter.js';
import { TenantLimits } from '../shared/limits/rate-limits/tenant-limits.js';
import { loadMasterKey } from '../shared/kernel/secrets/master-key.js';
import { SealedBox } from '../shared/kernel/secrets/sealed-box.js';
import { verpKey } from '../shared/sending/outbound-log/verp.js';
import { linkTokenKey } from '../shared/engagement/tracking/tokens.js';
import { buildHitSink } from './hit-sink.js';
import { RenderPool } from './render-pool.js';
import { acceptSend } from '../shared/sending/accept.js';
import { createSendingDeps } from '../shared/sending/deps.js';
import { SystemMail } from '../shared/sending/system-mail/mailer.js';
import type { WorkerDeps } from '../shared/operations/workers/catalog.js';
import { cachedQueueDepths } from '../shared/jobs/depth.js';
import { Metrics } from '../shared/operations/metrics/metrics.js';
import { TenantQueries } from '../shared/db/deadline.js';

/** What a process starts from: its configuration, database, logger, job queues and clock. */
export interface Core {
  config: Config;
  sql: Sql;
  log: Logger;
  boss: Boss;
  clock: Clock;
}

/**
 * Every role's deps at once: the API's context, the MX's, submission's, delivery's, the webhook worker's and the scheduled workers' (the bounce intake takes a
 * part of them).
 */
export interface Services extends ApiContext, MxDeps, SubmissionDeps, DeliveryDeps, WebhookDeps, WorkerDeps {
  /** The process's metrics, built here once and recorded by every adapter (served on the operator port). */
  metrics: Metrics;
  /**
   * Flushes what the services hold (system e-mails in flight, rate-limit counts, key use); call after the roles stopped, before the queue and database close.
   */
  close(): Promise<void>;
}

/**
 * Builds each service once: the resolvers, the sealing box and VERP key from one read of the
 * master key, the send path's batching writer, look-ups and counters (shared by the API,
 * submission, system mail and delivery, so their batches are shared too), the session tokens,
 * credential resolver, key-use recorder and rate limiter (shared by the API and submission, so a
 * key's HTTP and SMTP sends count in one place), and the job queues every role sends to.
 */
export async function buildServices(core: Core): Promise<Services> {
  const { config, sql, log, boss, clock } = core;
  const metrics = new Metrics();
  metrics.readQueueDepthWith(cachedQueueDepths(sql, config.observability.metrics.queue_depth_cache_ms));
  const expireInSeconds = config.delivery.workers.job_expire_seconds;
  await ensureInboundJobs(sql, { expireInSeconds });
  await ensureImportJobs(sql, boss, { expireInSeconds: config.limits.imports.job_expire_seconds });
  await ensureChatJobs(sql, config);
  await ensureImpersonationAuditJobs(sql);
  await ensureFanoutJobs(sql, boss, config);

  const masterKey = await loadMasterKey(config);
  const resolverOptions = { timeoutMs: config.dns.timeout_ms, tries: config.dns.tries };
  const vault = new SealedBox(masterKey);
  const dns = createResolver(config.dnsServers, resolverOptions);
  // Tenants' templates render on these threads only, for every role of the process (shared/sending/templates/renderer.ts).
  const renderer = new RenderPool(config.render, log);
  const sending = createSendingDeps({
    config,
    sql,
    log,
    boss,
    clock,
    dns,
    metrics,
    verpKey: verpKey(masterKey),
    linkKey: linkTokenKey(masterKey),
    vault,
    renderer,
  });

  const tokens = await SessionTokens.create(config);
  const limits = config.limits.rate_limits;
  const rateLimiter = new RateLimiter(sql, log, limits.sync_interval_ms, () => clock.now().getTime());
  rateLimiter.start();
  const keyUsage = new KeyUsageRecorder(sql, log, config.auth.key_last_used_write_interval_seconds);
  const systemMail = new SystemMail({
    config,
    sql,
    log,
    sendingDomains: (tenantId) => sending.lookups.sendingDomains(tenantId),
    send: (input) => acceptSend(sending, input),
  });

  const services: Services = {
    ...sending,
    metrics,
    publicResolvers: config.publicResolvers.map((server) => ({ server, dns: resolverFor(server, resolverOptions) })),
    vault,
    tokens,
    credentials: new CredentialResolver(sql, tokens, config, clock),
    keyUsage,
    rateLimiter,
    providerClassifier: new ProviderClassifier(dns, clock),
    tenantLimits: new TenantLimits(sql, limits.tenant_default_per_sec, limits.override_cache_ms, () => clock.now().getTime()),
    systemMail,
    testWebhook: (tenantId) => testSendWebhook(services, tenantId),
    postSigned,
    openMailbox: pop3Opener({ dns, vault }),
    hits: await buildHitSink(config, sql, log),
    queries: new TenantQueries(sql, config.queries),
    async close() {
      await systemMail.drain();
      await Promise.all([rateLimiter.close(), keyUsage.close(), services.hits.close(), renderer.close()]);
    },
  };
  return services;
}
