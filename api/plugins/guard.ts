// The request guard every route passes: authenticate, count against rate limits, then authorize.
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { authenticate, authorize, type AuthOutcome } from './auth.js';
import { CONTEXT_PLUGIN } from './context.js';
import { applyRateLimit } from './rate-limit.js';
import { defaultRouteRole, requireRole } from '../../shared/accounts/team/roles.js';
import { epochMs } from '../../shared/kernel/clock.js';
import type { ApiContext } from '../context.js';
import { routeOf } from '../request-route.js';

/** Plugin name, for the plugins that read request.principal. */
export const GUARD_PLUGIN = 'mailpath-guard';

/** A route as the guard sees it: what its config asks of callers. */
export interface GuardedRoute {
  method: string;
  url: string;
  config: FastifyContextConfig;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered after the guard, with its config: what tests sweep to prove each one is fenced. */
    guardedRoutes: readonly GuardedRoute[];
  }
}

/**
 * Guards one request: undefined when it is settled at once (the common case: a public route, or an API key
 * whose record, tenant limits and rate windows this process holds), a promise when it waits on the database.
 * Throws (or rejects) with the refusal.
 */
export function guardRequest(ctx: ApiContext, request: FastifyRequest, reply: FastifyReply): Promise<void> | undefined {
  const config = routeOf(request).config;
  const outcome = authenticate(ctx, request, config);
  if (outcome instanceof Promise) return outcome.then((o) => count(ctx, request, reply, config, o));
  return count(ctx, request, reply, config, outcome);
}

function count(ctx: ApiContext, request: FastifyRequest, reply: FastifyReply, config: FastifyContextConfig, outcome: AuthOutcome): Promise<void> | undefined {
  // Counted before the auth verdict, so failed credentials still use up the caller's address bucket.
  const counting = applyRateLimit(ctx, request, reply, config, outcome.principal);
  if (counting) return counting.then(() => admit(ctx, request, config, outcome));
  admit(ctx, request, config, outcome);
  return undefined;
}

function admit(ctx: ApiContext, request: FastifyRequest, config: FastifyContextConfig, outcome: AuthOutcome): void {
  if (outcome.error) throw outcome.error;
  if (!outcome.principal) return;
  authorize(outcome.principal, config);
  // Users by their role, API keys by their creator's (the key's ceiling); defineRoute always sets config.role, other routes get the method's default.
  requireRole(outcome.principal, config.role ?? defaultRouteRole(request.method, ''));
  request.principal = outcome.principal;
  if (outcome.principal.kind === 'api_key') ctx.keyUsage.record(outcome.principal.key!.id, epochMs(ctx.clock), request.ip);
}

const guard: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  app.decorateRequest('principal', undefined);
  app.decorateRequest('matchedRoute', undefined);
  const routes: GuardedRoute[] = [];
  app.decorate('guardedRoutes', routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, config: (route.config ?? {}) as FastifyContextConfig });
  });
  // A callback hook, not an async one: most requests are guarded without a promise (guardRequest), so an async
  // hook's promise and its microtasks would be the larger part of the cost.
  app.addHook('onRequest', (request, reply, done) => {
    let waiting: Promise<void> | undefined;
    try {
      waiting = guardRequest(ctx, request, reply);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (waiting) waiting.then(() => done(), done);
    else done();
  });
};

/** Not encapsulated (fastify-plugin): the hook is the root's, so it runs before every route, the route groups' included. */
export const guardPlugin = fp(guard, { name: GUARD_PLUGIN, dependencies: [CONTEXT_PLUGIN] });
