// The request guard every route passes: authenticate, count against rate limits, then authorize.
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { authenticate, authorize } from './auth.js';
import { CONTEXT_PLUGIN } from './context.js';
import { applyRateLimit } from './rate-limit.js';
import { defaultRouteRole, requireRole } from '../../shared/team/roles.js';

/** Plugin name, for the plugins that read request.principal. */
export const GUARD_PLUGIN = 'mailpath-guard';

const guard: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  app.decorateRequest('principal', undefined);
  app.addHook('onRequest', async (request, reply) => {
    const config = request.routeOptions.config;
    const outcome = await authenticate(ctx, request, config);
    // Counted before the auth verdict, so failed credentials still use up the caller's address bucket.
    await applyRateLimit(ctx, request, reply, config, outcome.principal);
    if (outcome.error) throw outcome.error;
    if (!outcome.principal) return;
    authorize(outcome.principal, config);
    // Roles bind users only (API keys keep their scopes); defineRoute always sets config.role, other routes get the method's default.
    requireRole(outcome.principal, config.role ?? defaultRouteRole(request.method, ''));
    request.principal = outcome.principal;
    if (outcome.principal.kind === 'api_key') ctx.keyUsage.record(outcome.principal.key!.id, ctx.clock.now(), request.ip);
  });
};

/** Not encapsulated (fastify-plugin): the hook is the root's, so it runs before every route, the route groups' included. */
export const guardPlugin = fp(guard, { name: GUARD_PLUGIN, dependencies: [CONTEXT_PLUGIN] });
