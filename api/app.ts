// Builds the Fastify application: envelope and errors, request guard, OpenAPI, and every route group under /api/v1.
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { ApiContext } from './context.js';
import { registerErrorHandling } from './plugins/errors.js';
import { registerGuard } from './plugins/guard.js';
import { API_PREFIX, registerOpenApi } from './plugins/openapi.js';
import { authRoutes } from './routes/auth.js';
import { twoFactorRoutes } from './routes/auth-2fa.js';
import { passwordResetRoutes } from './routes/password-reset.js';
import { whoamiRoutes } from './routes/whoami.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { adminTenantRoutes } from './routes/admin-tenants.js';
import { domainRoutes } from './routes/domains.js';
import { adminDkimRoutes } from './routes/admin-dkim.js';
import { adminWorkerRoutes } from './routes/admin-workers.js';
import { suppressionRoutes } from './routes/suppressions.js';
import { templateRoutes } from './routes/templates.js';
import { transactionalRoutes } from './routes/transactional.js';
import { sendRoutes } from './routes/sends.js';
import { eventRoutes } from './routes/events.js';
import { inboundWebhookRoutes } from './routes/inbound-webhook.js';
import { adminInboundWebhookRoutes } from './routes/admin-inbound-webhook.js';
import { mailAuthRoutes } from './routes/mail-auth.js';
import { mailboxRoutes } from './routes/mail-mailboxes.js';
import { mailMessageRoutes } from './routes/mail-messages.js';
import { registerKeyActivity } from './plugins/key-activity.js';
import { teamRoutes } from './routes/team.js';
import { teamAuthRoutes } from './routes/team-auth.js';
import { apiKeyActivityRoutes } from './routes/api-key-activity.js';

const ROUTE_GROUPS = [authRoutes, twoFactorRoutes, passwordResetRoutes, whoamiRoutes, apiKeyRoutes, adminTenantRoutes, domainRoutes, adminDkimRoutes, adminWorkerRoutes, suppressionRoutes, templateRoutes, transactionalRoutes, sendRoutes, eventRoutes, inboundWebhookRoutes, adminInboundWebhookRoutes, mailAuthRoutes, mailboxRoutes, mailMessageRoutes, teamRoutes, teamAuthRoutes, apiKeyActivityRoutes];

export interface BuildOptions {
  https?: { key: string; cert: string };
}

export async function buildApp(ctx: ApiContext, options: BuildOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: ctx.log,
    bodyLimit: ctx.config.limits.request.body_limit_bytes,
    // Returning 503 while closing lets a load balancer move traffic during graceful shutdown.
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    requestIdHeader: 'x-request-id',
    // Errors Fastify raises before routing (e.g. a malformed percent-encoding) get the envelope too.
    frameworkErrors: (err, _request, reply) => {
      const body = { ok: false, error: 'bad_request', message: err.code === 'FST_ERR_BAD_URL' ? 'malformed URL' : 'bad request' };
      void (reply as unknown as FastifyReply).code(400).send(body);
    },
    ...(options.https ? { https: options.https } : {}),
  }) as unknown as FastifyInstance;
  // Bodies are JSON only; a text/plain body is refused as 415 like any other type.
  app.removeContentTypeParser('text/plain');
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);
  registerGuard(app, ctx);
  registerKeyActivity(app, ctx);
  await registerOpenApi(app, ctx.config);
  await app.register(async (api) => {
    for (const group of ROUTE_GROUPS) group(api, ctx);
  }, { prefix: API_PREFIX });
  return app;
}
