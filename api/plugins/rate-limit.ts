// Chooses a request's rate-limit buckets (per key / user / client address, plus the tenant layer) and sets X-RateLimit-* headers.
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../shared/errors.js';
import type { Principal } from '../../shared/auth/principal.js';
import type { Bucket } from '../../shared/ratelimit/limiter.js';
import type { ApiContext } from '../context.js';

function category(request: FastifyRequest, config: FastifyContextConfig, principal: Principal | undefined) {
  if (!principal) return 'public' as const;
  if (config.rateLimit) return config.rateLimit;
  return request.method === 'GET' || request.method === 'HEAD' ? ('read' as const) : ('write' as const);
}

export async function bucketsFor(ctx: ApiContext, request: FastifyRequest, config: FastifyContextConfig, principal: Principal | undefined): Promise<Bucket[]> {
  const limits = ctx.config.limits.rate_limits;
  const cat = category(request, config, principal);
  const identity =
    principal?.kind === 'api_key' ? `key:${principal.key!.id}` :
    principal?.kind === 'mailbox' ? `mailbox:${principal.mailbox!.id}` :
    principal ? `user:${principal.user!.id}` : `ip:${request.ip}`;
  const buckets: Bucket[] = [{ id: `${identity}:${cat}`, limit: limits.per_minute[cat], windowSeconds: 60 }];
  if (principal) {
    const tenant = await ctx.tenantLimits.get(principal.tenant.id);
    buckets.push({ id: `tenant:${principal.tenant.id}:sec`, limit: tenant.perSec, windowSeconds: 1 });
    if (tenant.perDay !== null) buckets.push({ id: `tenant:${principal.tenant.id}:day`, limit: tenant.perDay, windowSeconds: 86_400 });
  }
  return buckets;
}

/** Counts the request; sets the headers; throws 429 when a bucket is full. */
export async function applyRateLimit(ctx: ApiContext, request: FastifyRequest, reply: FastifyReply, config: FastifyContextConfig, principal: Principal | undefined): Promise<void> {
  const decision = await ctx.rateLimiter.hit(await bucketsFor(ctx, request, config, principal));
  const state = decision.reported;
  reply.header('X-RateLimit-Limit', state.bucket.limit);
  reply.header('X-RateLimit-Remaining', state.remaining);
  reply.header('X-RateLimit-Reset', state.resetSeconds);
  if (!decision.allowed) {
    throw new AppError('rate_limited', `rate limit of ${state.bucket.limit} requests per ${state.bucket.windowSeconds === 1 ? 'second' : state.bucket.windowSeconds === 60 ? 'minute' : 'day'} reached; retry after ${state.resetSeconds}s`, {
      headers: { 'Retry-After': String(state.resetSeconds) },
    });
  }
}
