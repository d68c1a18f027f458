// Builds the Fastify application: listener limits, context, JSON body parser, envelope and errors, request guard, key activity, request log, OpenAPI, and
// every route group under /api/v1.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyReply } from 'fastify';
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { responseSerializerCompiler } from './serializer.js';
import { lazyChildLogger } from './request-logger.js';
import type { ApiContext } from './context.js';
import { clientErrorHandler, listenerOptions } from './listener.js';
import { contextPlugin } from './plugins/context.js';
import { errorsPlugin } from './plugins/errors.js';
import { closingPlugin } from './plugins/closing.js';
import { guardPlugin } from './plugins/guard.js';
import { jsonBodyPlugin } from './plugins/json-body.js';
import { impersonationPlugin } from './plugins/impersonation.js';
import { keyActivityPlugin } from './plugins/key-activity.js';
import { addressRateHeaders } from './plugins/rate-limit.js';
import { API_PREFIX, openApiPlugin } from './plugins/openapi.js';
import { requestLogPlugin } from './plugins/request-log.js';
import { metricsPlugin } from './plugins/metrics.js';
import type { ApiInstance } from './route.js';
import { authRoutes } from './routes/auth.js';
import { appSessionRoutes } from './routes/app-session.js';
import { twoFactorRoutes } from './routes/auth-2fa.js';
import { passwordResetRoutes } from './routes/password-reset.js';
import { whoamiRoutes } from './routes/whoami.js';
import { quotaRoutes } from './routes/quota.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { adminTenantRoutes } from './routes/admin-tenants.js';
import { adminTenantActionRoutes } from './routes/admin-tenants-actions.js';
import { adminTenantSettingsRoutes } from './routes/admin-tenant-settings.js';
import { adminRateLimitRoutes } from './routes/admin-ratelimits.js';
import { adminTenantHealthRoutes } from './routes/admin-tenant-health.js';
import { domainRoutes } from './routes/domains.js';
import { adminDkimRoutes } from './routes/admin-dkim.js';
import { adminWorkerRoutes } from './routes/admin-workers.js';
import { adminObservabilityRoutes } from './routes/admin-observability.js';
import { adminIpWatchdogRoutes } from './routes/admin-ip-watchdog.js';
import { adminWarmupRoutes } from './routes/admin-warmup.js';
import { adminWarmupScheduleRoutes } from './routes/admin-warmup-schedule.js';
import { adminSeedlistRoutes } from './routes/admin-seedlist.js';
import { suppressionRoutes } from './routes/suppressions.js';
import { contactRoutes } from './routes/contacts.js';
import { contactCustomFieldRoutes } from './routes/contact-custom-fields.js';
import { templateRoutes } from './routes/templates.js';
import { listRoutes } from './routes/lists.js';
import { bounceMailboxRoutes } from './routes/bounce-mailboxes.js';
import { goalRoutes } from './routes/goals.js';
import { engagementExportRoutes } from './routes/engagement-export.js';
import { reputationRoutes } from './routes/reputation.js';
import { analyticsRoutes } from './routes/analytics.js';
import { campaignRoutes } from './routes/campaigns.js';
import { campaignStatsRoutes } from './routes/campaign-stats.js';
import { campaignProofRoutes } from './routes/campaign-proofs.js';
import { transactionalRoutes } from './routes/transactional.js';
import { sendRoutes } from './routes/sends.js';
import { eventRoutes } from './routes/events.js';
import { inboundWebhookRoutes } from './routes/inbound-webhook.js';
import { senderSettingsRoutes } from './routes/sender-settings.js';
import { eventWebhookRoutes } from './routes/event-webhooks.js';
import { adminInboundWebhookRoutes } from './routes/admin-inbound-webhook.js';
import { adminLicenseKeyRoutes } from './routes/admin-license-keys.js';
import { licenseRoutes } from './routes/license.js';
import { mailAuthRoutes } from './routes/mail-auth.js';
import { mailboxRoutes } from './routes/mail-mailboxes.js';
import { mailMessageRoutes } from './routes/mail-messages.js';
import { teamRoutes } from './routes/team.js';
import { teamAuthRoutes } from './routes/team-auth.js';
import { apiKeyActivityRoutes } from './routes/api-key-activity.js';
import { segmentRoutes } from './routes/segments.js';
import { contactImportRoutes } from './routes/contact-imports.js';
import { md5EntryRoutes, md5ListRoutes } from './routes/md5-lists.js';
import { auditRoutes } from './routes/audit.js';
import { auditFilterRoutes } from './routes/audit-filters.js';
import { adminComplianceRoutes } from './routes/admin-compliance.js';
import { trackingPages } from './pages/tracking.js';
import { webAppPages } from './pages/web-app.js';

/** Every route group, one per line (a new group is a one-line change). */
const ROUTE_GROUPS = [
  authRoutes,
  appSessionRoutes,
  twoFactorRoutes,
  passwordResetRoutes,
  whoamiRoutes,
  quotaRoutes,
  apiKeyRoutes,
  apiKeyActivityRoutes,
  teamRoutes,
  teamAuthRoutes,
  domainRoutes,
  suppressionRoutes,
  templateRoutes,
  transactionalRoutes,
  sendRoutes,
  eventRoutes,
  contactRoutes,
  contactCustomFieldRoutes,
  listRoutes,
  campaignRoutes,
  campaignStatsRoutes,
  campaignProofRoutes,
  goalRoutes,
  engagementExportRoutes,
  reputationRoutes,
  analyticsRoutes,
  segmentRoutes,
  contactImportRoutes,
  md5ListRoutes,
  md5EntryRoutes,
  inboundWebhookRoutes,
  senderSettingsRoutes,
  eventWebhookRoutes,
  bounceMailboxRoutes,
  mailAuthRoutes,
  mailboxRoutes,
  mailMessageRoutes,
  adminTenantRoutes,
  adminTenantActionRoutes,
  adminTenantSettingsRoutes,
  adminRateLimitRoutes,
  adminTenantHealthRoutes,
  adminDkimRoutes,
  adminWorkerRoutes,
  adminObservabilityRoutes,
  adminIpWatchdogRoutes,
  adminWarmupRoutes,
  adminWarmupScheduleRoutes,
  adminSeedlistRoutes,
  adminInboundWebhookRoutes,
  adminLicenseKeyRoutes,
  licenseRoutes,
  auditRoutes,
  auditFilterRoutes,
  adminComplianceRoutes,
];

export interface BuildOptions {
  https?: { key: string; cert: string };
}

/**
 * Plugins load in registration order, so the root's error handler, guard (onRequest) and key-activity (onResponse)
 * hooks and swagger's onRoute hook are all in place before the route groups: every route is guarded, counted and documented.
 */
export async function buildApp(ctx: ApiContext, options: BuildOptions = {}): Promise<ApiInstance> {
  // Typed as the plain HTTP server even with `https`: only app.server's class differs (an https.Server, which nothing
  // here reads), requests and replies are the same IncomingMessage and ServerResponse.
  const { requestTimeout, keepAliveTimeout, ...serverOptions } = listenerOptions(ctx.config.limits.request);
  const app = Fastify<Server, IncomingMessage, ServerResponse, FastifyBaseLogger>({
    loggerInstance: ctx.log,
    bodyLimit: ctx.config.limits.request.body_limit_bytes,
    requestTimeout,
    keepAliveTimeout,
    // Requests Node's parser refuses or that time out (400, 408, 431) are answered in the envelope with rate headers.
    clientErrorHandler: clientErrorHandler(ctx),
    // Requests arriving while closing are answered 503 in the envelope by api/plugins/closing.ts (a load balancer
    // moves the traffic during a graceful shutdown); Fastify's own 503 has a body of its own.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    requestIdHeader: 'x-request-id',
    // Path parameters may carry a license key (a JWS of a few hundred characters: POST /admin/license-keys/{key}/revoke);
    // Fastify's default of 100 would refuse those. Above every parameter schema's limit, so an oversize one gets the
    // 422 naming it; past this, 400.
    routerOptions: { maxParamLength: 2048 },
    // Fastify's request lines off: one line per request instead, its URL's secrets redacted (api/plugins/request-log.ts).
    logController: new LogController({ disableRequestLogging: true }),
    // No pino child per request unless something logs through request.log (api/request-logger.ts).
    childLoggerFactory: lazyChildLogger,
    // Errors Fastify raises before routing (e.g. a malformed percent-encoding) get the envelope too, and the
    // address's public bucket (no route, so no guard, has counted them).
    frameworkErrors: (err, request, reply) => {
      const body = { ok: false, error: 'bad_request', message: err.code === 'FST_ERR_BAD_URL' ? 'malformed URL' : 'bad request' };
      void addressRateHeaders(ctx, request.ip).then((headers) => {
        // The hook is generic over a route's schema, and there is no route yet: its code()/send() types cannot resolve.
        void (reply as FastifyReply).code(400).headers(headers).send(body);
      });
    },
    ...(options.https ? { https: { ...serverOptions, ...options.https } } : { http: serverOptions }),
  }).withTypeProvider<ZodTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(responseSerializerCompiler({ validate: ctx.config.validateResponses }));
  app.register(contextPlugin, { ctx });
  app.register(jsonBodyPlugin);
  app.register(errorsPlugin);
  app.register(closingPlugin);
  app.register(guardPlugin);
  app.register(keyActivityPlugin);
  app.register(impersonationPlugin);
  app.register(requestLogPlugin);
  app.register(metricsPlugin);
  app.register(openApiPlugin);
  await app.register(
    async (api) => {
      for (const group of ROUTE_GROUPS) api.register(group);
    },
    { prefix: API_PREFIX },
  );
  // The open pixel, click redirects and unsubscribe links mail carries (/o/, /c/, /u/): public, outside the API prefix.
  await app.register(trackingPages);
  // The dashboard (/app/, and / leading there): a single-page app that talks to /api/v1 like any other client. It
  // holds the pages the platform's e-mails link to (reset password, accept an invite).
  await app.register(webAppPages);
  return app;
}
