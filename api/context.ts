// What the API needs from the running service: the domain deps, the send path and the request-side services, all built once by the entry point
// (main/services.ts).
import type { ProviderClassifier } from '../shared/engagement/analytics/provider-classifier.js';
import type { CredentialResolver } from '../shared/accounts/auth/credentials.js';
import type { TenantQueries } from '../shared/db/deadline.js';
import type { SessionTokens } from '../shared/accounts/auth/jwt.js';
import type { DomainDeps } from '../shared/deliverability/domains/deps.js';
import type { WebhookTester } from '../shared/webhooks/inbound/tester.js';
import type { KeyUsageRecorder } from '../shared/accounts/keys/last-used.js';
import type { RateLimiter } from '../shared/limits/rate-limits/limiter.js';
import type { TenantLimits } from '../shared/limits/rate-limits/tenant-limits.js';
import type { SendingDeps } from '../shared/sending/deps.js';
import type { SystemMail } from '../shared/sending/system-mail/mailer.js';
import type { HitSink } from '../shared/engagement/tracking/recorder.js';
import type { PostSigned } from '../shared/webhooks/post.js';
import type { OpenMailbox } from '../shared/delivery/bounce-mailboxes/mailbox-session.js';

/**
 * Domain services (database, config, clock, resolvers, sealing box), the send path (gates, signing,
 * the delivery queue) and the request-side services the guard uses. Plugins and route groups read it
 * as app.ctx (decorated once on the root by api/plugins/context.ts).
 */
export interface ApiContext extends DomainDeps, SendingDeps {
  tokens: SessionTokens;
  credentials: CredentialResolver;
  keyUsage: KeyUsageRecorder;
  rateLimiter: RateLimiter;
  tenantLimits: TenantLimits;
  /** Recipient domains → mailbox providers (by name, else MX), with its cache of look-ups: the analytics and the observability overview share it. */
  providerClassifier: ProviderClassifier;
  /** Platform e-mails (password reset, invites) through the send path as the super-admin tenant, or logged. */
  systemMail: SystemMail;
  /** POST /settings/inbound-webhook/test-send: one signed POST to the tenant's webhook. */
  testWebhook: WebhookTester;
  /** POST /webhooks/{id}/test: the signed POST event webhooks go out with (jobs/webhook-post.ts). */
  postSigned: PostSigned;
  /** POST /bounce-mailboxes/{id}/verify and the run-now of the poller: a logged-in session to a tenant's POP3 mailbox. */
  openMailbox: OpenMailbox;
  /** Open and click hits of the public tracking endpoints, written by group commit (api/pages/tracking.ts). */
  hits: HitSink;
  /** Tenant-shaped reads (segment counts, contact search, analytics, exports) with their deadlines and per-tenant caps. */
  queries: TenantQueries;
}
