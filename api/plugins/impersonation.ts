// Requests made with an impersonation token: the super-admin's own account (/auth/*) and routes granting lasting access are out of reach, and every write is
// queued for its super_admin.impersonation_action audit row once answered.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { AppError } from '../../shared/kernel/errors.js';
import { queueImpersonationAction } from '../../shared/accounts/impersonation/audit-jobs.js';
import { CONTEXT_PLUGIN } from './context.js';
import { GUARD_PLUGIN } from './guard.js';
import { API_PREFIX } from './openapi.js';
import { routeOf } from '../request-route.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const impersonation: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const queued = new Set<Promise<void>>();

  // After the guard set the principal: the token acts in the tenant, never on the super-admin's password or 2FA.
  // Callback hooks, not async ones: they run on every request, and the common case is one field check.
  // Nor does it hand out access that would outlive it (API keys, scope changes, invites, roles: routes marked
  // grantsAccess): what support needs lasting is asked of the tenant's own members. Refused before the body is read.
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    if (!request.principal?.impersonation) return done();
    const route = routeOf(request);
    if ((route.url ?? '').startsWith(`${API_PREFIX}/auth/`)) {
      return done(new AppError('forbidden', "an impersonation token cannot manage the super-admin's own account"));
    }
    if (route.config.grantsAccess) {
      return done(
        new AppError(
          'forbidden',
          'an impersonated session cannot grant lasting access (API keys, key scopes, invites, roles): it would outlast the impersonation token; ' +
            'a member of the tenant must do it',
        ),
      );
    }
    done();
  });

  // onResponse runs once the answer is sent: queueing the audit job never delays the client.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const principal = request.principal;
    if (!principal?.impersonation || !WRITES.has(request.method)) return done();
    const job = queueImpersonationAction(ctx, {
      tenant_id: principal.tenant.id,
      impersonator_user_id: principal.impersonation.impersonatorUserId,
      method: request.method,
      route: routeOf(request).url ?? null,
      path: request.url.split('?')[0]!,
      status_code: reply.statusCode,
      request_id: String(request.id),
      ip: request.ip,
      at: ctx.clock.now().toISOString(),
    });
    queued.add(job);
    void job.finally(() => queued.delete(job));
    done();
  });

  // A graceful stop waits for the jobs still being queued, so none is lost to a restart.
  app.addHook('onClose', async () => {
    await Promise.allSettled([...queued]);
  });
};

/** Not encapsulated (fastify-plugin): the hooks are the root's, so they see every route. After the guard. */
export const impersonationPlugin = fp(impersonation, { name: 'mailpath-impersonation', dependencies: [CONTEXT_PLUGIN, GUARD_PLUGIN] });
