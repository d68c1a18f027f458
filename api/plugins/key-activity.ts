// Counts every API-key request (route pattern, status, latency, client address) into the key activity recorder.
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import fp from 'fastify-plugin';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { KeyActivityRecorder, type KeyCall } from '../../shared/accounts/keys/activity-recorder.js';
import { keyIdOfHash } from '../../shared/accounts/keys/service.js';
import { hashApiKey } from '../../shared/accounts/keys/secrets.js';
import { epochMs } from '../../shared/kernel/clock.js';
import type { ApiContext } from '../context.js';
import { routeOf } from '../request-route.js';
import { CONTEXT_PLUGIN } from './context.js';
import { GUARD_PLUGIN } from './guard.js';
import { API_PREFIX } from './openapi.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Per-minute API key request counts not yet written (flushed every few seconds and on close). */
    keyActivity: KeyActivityRecorder;
  }
}

const MAX_CACHED = 10_000;

/**
 * Which known key a refused request presented. A request the guard refused (401 revoked key, 403 missing scope or
 * route mode, 429) has no principal, yet it is the most telling traffic a key has: a deployment still using a
 * revoked key, or someone trying a leaked one. So a presented API key is looked up by hash, revoked keys included,
 * and counted against it. A secret matching no key (a typo, a guess) has no key and no tenant to show it to: dropped.
 * Look-ups are cached briefly and happen only for refused requests, which the per-address rate limit already bounds.
 */
class RefusedKeyAttribution {
  private readonly cache = new Map<string, { id: string | null; at: number }>();

  constructor(private readonly ctx: ApiContext) {}

  async keyIdOf(request: FastifyRequest): Promise<string | null> {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    const secret = match?.[1];
    if (!secret || secret.length > 4096 || !this.ctx.credentials.isApiKey(secret)) return null;
    const hash = hashApiKey(secret);
    const hit = this.cache.get(hash);
    if (hit && Date.now() - hit.at < Math.max(this.ctx.config.auth.credential_cache_ms, 1000)) return hit.id;
    const id = await keyIdOfHash(this.ctx, hash);
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(hash, { id, at: Date.now() });
    return id;
  }
}

/** Counting must never disturb a request that has already been answered: a failure is logged, nothing more. */
function failed(request: FastifyRequest, err: unknown): void {
  request.log.warn({ err }, 'could not count an API key request');
}

/** Labels per route config object (one per route) and method: built once, not per request. */
const labels = new WeakMap<object, Map<string, string>>();

/** "GET /templates/:id": the route pattern, not the concrete path, so ids do not split the counts. */
function routeLabel(request: FastifyRequest): string {
  const { config, url: pattern } = routeOf(request);
  if (!pattern) return `${request.method} (no such route)`;
  let byMethod = labels.get(config);
  if (!byMethod) labels.set(config, (byMethod = new Map()));
  let label = byMethod.get(request.method);
  if (label === undefined) {
    const path = pattern.startsWith(API_PREFIX) ? pattern.slice(API_PREFIX.length) || '/' : pattern;
    byMethod.set(request.method, (label = `${request.method} ${path}`));
  }
  return label;
}

const keyActivity: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const recorder = new KeyActivityRecorder(ctx.sql, ctx.log, ctx.config.limits.key_activity.flush_interval_ms);
  const attribution = new RefusedKeyAttribution(ctx);
  app.decorate('keyActivity', recorder);
  const callOf = (request: FastifyRequest, reply: FastifyReply, keyId: string): KeyCall => ({
    keyId,
    at: epochMs(ctx.clock),
    route: routeLabel(request),
    status: reply.statusCode,
    latencyMs: reply.elapsedTime,
    ip: request.ip,
  });
  // A callback hook, not an async one: a guarded request's key is counted in memory at once; only a refused
  // request's key needs a (cached) look-up, and only that one waits for it.
  app.addHook('onResponse', (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => {
    try {
      const principal = request.principal;
      if (principal?.kind === 'api_key') recorder.record(callOf(request, reply, principal.key!.id));
      else if (!principal && reply.statusCode >= 400) {
        // Public routes ignore credentials, so a key sent to one is not a use of it; an unknown path is (a misdirected client).
        const route = routeOf(request);
        if (!route.url || (route.config.auth ?? 'public') !== 'public') {
          recorder
            .recordLater(attribution.keyIdOf(request).then((keyId) => (keyId ? callOf(request, reply, keyId) : null)))
            .catch((err: unknown) => failed(request, err))
            .finally(() => done());
          return;
        }
      }
    } catch (err) {
      failed(request, err);
    }
    done();
  });
  // Runs inside app.close(), after in-flight requests are answered and before the database is closed.
  app.addHook('onClose', async () => {
    await recorder.close();
  });
};

/**
 * Not encapsulated (fastify-plugin): the decorator and the hooks are the root's, so every route is counted and
 * app.keyActivity is visible to the route groups. After the guard, whose principal it attributes requests to.
 */
export const keyActivityPlugin = fp(keyActivity, { name: 'mailpath-key-activity', dependencies: [CONTEXT_PLUGIN, GUARD_PLUGIN] });
