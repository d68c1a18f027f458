// Chooses a request's rate-limit buckets (per key / user / client address, plus the tenant layer) and sets X-RateLimit-* headers.
import type { Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import type { FastifyContextConfig, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../shared/kernel/errors.js';
import type { Principal } from '../../shared/accounts/auth/principal.js';
import type { Bucket, BucketState, Decision } from '../../shared/limits/rate-limits/limiter.js';
import { callerBucket, tenantBuckets, windowName, type RateCaller, type RateCategory } from '../../shared/limits/rate-limits/buckets.js';
import type { EffectiveTenantLimits } from '../../shared/limits/rate-limits/tenant-limits.js';
import type { ApiContext } from '../context.js';

function category(request: FastifyRequest, config: FastifyContextConfig, principal: Principal | undefined): RateCategory {
  // The tracking links (pixel, click, unsubscribe) have a generous bucket of their own: proxies fetch for many readers;
  // so do the dashboard's files, which every page load fetches before anyone signs in.
  if (!principal) return config.rateLimit === 'tracking' || config.rateLimit === 'app' ? config.rateLimit : 'public';
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
  return cachedBucketsFor(ctx, request, config, principal) ?? withTenantLimits(ctx, request, config, principal!);
}

interface MemoBuckets {
  perMinute: object;
  limits: EffectiveTenantLimits;
  buckets: Bucket[];
}

/**
 * An API key's buckets per category, made once while its principal is cached (the credential cache hands every
 * request the same frozen principal) and its tenant's limits are the same object (re-read limits are a new one):
 * no id strings built per request, and the limiter's map reads hash strings it has seen before.
 */
const memo = new WeakMap<Principal, Partial<Record<RateCategory, MemoBuckets>>>();

/** The buckets without a promise when the tenant's limits are cached (or there is no tenant); else undefined. */
function cachedBucketsFor(ctx: ApiContext, request: FastifyRequest, config: FastifyContextConfig, principal: Principal | undefined): Bucket[] | undefined {
  const perMinute = ctx.config.limits.rate_limits.per_minute;
  const cat = category(request, config, principal);
  if (!principal) return [callerBucket(callerOf(request, principal), cat, perMinute)];
  const limits = ctx.tenantLimits.cached(principal.tenant.id);
  if (!limits) return undefined;
  const remembered = principal.kind === 'api_key' ? memo.get(principal)?.[cat] : undefined;
  if (remembered && remembered.limits === limits && remembered.perMinute === perMinute) return remembered.buckets;
  const buckets = [callerBucket(callerOf(request, principal), cat, perMinute), ...tenantBuckets(principal.tenant.id, limits)];
  if (principal.kind === 'api_key' && Object.isFrozen(principal)) {
    let byCategory = memo.get(principal);
    if (!byCategory) memo.set(principal, (byCategory = {}));
    byCategory[cat] = { perMinute, limits, buckets };
  }
  return buckets;
}

async function withTenantLimits(ctx: ApiContext, request: FastifyRequest, config: FastifyContextConfig, principal: Principal): Promise<Bucket[]> {
  const caller = callerBucket(callerOf(request, principal), category(request, config, principal), ctx.config.limits.rate_limits.per_minute);
  return [caller, ...tenantBuckets(principal.tenant.id, await ctx.tenantLimits.get(principal.tenant.id))];
}

/** The spec's X-RateLimit-* headers for a bucket's state. */
export function rateLimitHeaders(state: BucketState): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(state.bucket.limit),
    'X-RateLimit-Remaining': String(state.remaining),
    'X-RateLimit-Reset': String(state.resetSeconds),
  };
}

/**
 * The headers of the request each connection is answering, for the listener's own answers (a 408 when the body
 * stalls): that request was already counted. Keyed by socket; stale once its response has finished.
 */
const counted = new WeakMap<Socket, { res: ServerResponse; headers: Record<string, string> }>();

/** The rate-limit headers of the request in flight on a connection, if it was counted and its answer is not sent. */
export function inFlightRateHeaders(socket: Socket): { res: ServerResponse; headers: Record<string, string> } | undefined {
  const entry = counted.get(socket);
  return entry && !entry.res.writableEnded ? entry : undefined;
}

/**
 * Counts an answer given before any caller is identified (the HTTP→HTTPS redirect, a request the listener could
 * not read) against the client address's public bucket, and returns its headers. It never refuses: such answers
 * keep their status; what they count uses up the address's allowance for public routes. Without the database the
 * answer still goes out, without headers.
 */
export async function addressRateHeaders(ctx: ApiContext, ip: string | undefined): Promise<Record<string, string>> {
  const limits = ctx.config.limits.rate_limits;
  try {
    const decision = await ctx.rateLimiter.hit([callerBucket({ kind: 'address', ip: ip ?? 'unknown' }, 'public', limits.per_minute)]);
    return rateLimitHeaders(decision.reported);
  } catch (err) {
    ctx.log.warn({ err }, 'rate limit of a listener answer not counted');
    return {};
  }
}

/**
 * Counts the request; sets the headers; throws 429 when a bucket is full. Without a promise in the common case
 * (tenant limits cached, every window already read by this process); a promise only when one needs the database.
 */
export function applyRateLimit(
  ctx: ApiContext,
  request: FastifyRequest,
  reply: FastifyReply,
  config: FastifyContextConfig,
  principal: Principal | undefined,
): Promise<void> | undefined {
  const buckets = cachedBucketsFor(ctx, request, config, principal);
  const decision = buckets && ctx.rateLimiter.hitIfRead(buckets, principal?.tenant.id);
  if (decision) {
    answer(request, reply, decision);
    return undefined;
  }
  return (async () => {
    const all = buckets ?? (await bucketsFor(ctx, request, config, principal));
    answer(request, reply, await ctx.rateLimiter.hit(all, principal?.tenant.id));
  })();
}

function answer(request: FastifyRequest, reply: FastifyReply, decision: Decision): void {
  const state = decision.reported;
  const headers = rateLimitHeaders(state);
  reply.headers(headers);
  counted.set(request.raw.socket, { res: reply.raw, headers });
  if (!decision.allowed) {
    throw new AppError(
      'rate_limited',
      `rate limit of ${state.bucket.limit} requests per ${windowName(state.bucket)} reached; retry after ${state.resetSeconds}s`,
      {
        headers: { 'Retry-After': String(state.resetSeconds) },
      },
    );
  }
}
