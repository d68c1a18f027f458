// The rate-limit buckets, named in one place: the API and SMTP submission count a key's sends in the same bucket, so HTTP and SMTP draw on one allowance.
import type { Config } from '../../config/index.js';
import type { Bucket } from './limiter.js';
import type { EffectiveTenantLimits } from './tenant-limits.js';

/** Route categories with a per-minute limit per caller (config/limits.yaml rate_limits.per_minute). */
export type RateCategory = keyof Config['limits']['rate_limits']['per_minute'];

/** Who is counted: an API key, a user session, a mailbox session, or (unauthenticated) a client address. */
export type RateCaller = { kind: 'api_key'; id: string } | { kind: 'user'; id: string } | { kind: 'mailbox'; id: string } | { kind: 'address'; ip: string };

const PREFIX: Record<RateCaller['kind'], string> = { api_key: 'key', user: 'user', mailbox: 'mailbox', address: 'ip' };

/** The caller's per-minute bucket of a category, e.g. `key:<id>:send`. */
export function callerBucket(caller: RateCaller, category: RateCategory, perMinute: Record<RateCategory, number>): Bucket {
  const id = caller.kind === 'address' ? caller.ip : caller.id;
  return { id: `${PREFIX[caller.kind]}:${id}:${category}`, limit: perMinute[category], windowSeconds: 60 };
}

/** The tenant layer over every caller of a tenant: per second, and per day when an override sets one. */
export function tenantBuckets(tenantId: string, limits: EffectiveTenantLimits): Bucket[] {
  const buckets: Bucket[] = [{ id: `tenant:${tenantId}:sec`, limit: limits.perSec, windowSeconds: 1 }];
  if (limits.perDay !== null) buckets.push({ id: `tenant:${tenantId}:day`, limit: limits.perDay, windowSeconds: 86_400 });
  return buckets;
}

/** "second", "minute" or "day": the window of a bucket, for messages. */
export function windowName(bucket: Bucket): string {
  return bucket.windowSeconds === 1 ? 'second' : bucket.windowSeconds === 60 ? 'minute' : 'day';
}
