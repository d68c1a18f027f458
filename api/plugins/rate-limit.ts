// Chooses a request's rate-limit buckets (per key / user / client address, plus the tenant layer) and sets X-RateLimit-* headers.
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../shared/errors.js';
import type { Principal } from '../../shared/auth/principal.js';
import type { Bucket } from '../../shared/ratelimit/limiter.js';
import { callerBucket, tenantBuckets, windowName, type RateCaller, type RateCategory } from '../../shared/ratelimit/buckets.js';
import type { ApiContext } from '../context.js';

function category(request: FastifyRequest, config: FastifyContextConfig, principal: Principal | undefined): RateCategory {
  if (!principal) return 'public';
  if (config.rateLimit) return config.rateLimit;
  return request.method === 'GET' || request.method === 'HEAD' ? 'read' : 'write';
}

function callerOf(request: FastifyRequest, principal: Principal | undefined): RateCaller {
  if (principal?.kind === 'api_key') return { kind: 'api_key', id: principal.key!.id };
  if (principal?.kind === 'mailbox') return { kind: 'mailbox', id: principal.mailbox!.id };
  if (principal) return { kind: 'user', id: principal.user!.id };
  return { kind: 'address', ip: request.ip };
}

export async function bucketsFor(ctx: ApiContext, request: FastifyRequest, config: FastifyContextConfig, principal: Principal | undefined): Promise<Bucket[]> {
  const limits = ctx.config.limits.rate_limits;
  const buckets = [callerBucket(callerOf(request, principal), category(request, config, principal), limits.per_minute)];
  if (principal) buckets.push(...tenantBuckets(principal.tenant.id, await ctx.tenantLimits.get(principal.tenant.id)));
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
    throw new AppError('rate_limited', `rate limit of ${state.bucket.limit} requests per ${windowName(state.bucket)} reached; retry after ${state.resetSeconds}s`, {
      headers: { 'Retry-After': String(state.resetSeconds) },
    });
  }
}
