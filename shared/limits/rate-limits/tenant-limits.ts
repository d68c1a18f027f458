// Per-tenant API limits (admin overrides over the global per-second default), cached for up to a minute.
import type { Queryable } from '../../db/connection.js';

export interface TenantLimitOverride {
  tenant_id: string;
  api_requests_per_sec: number | null;
  api_requests_per_day: number | null;
  notes: string | null;
  updated_at: Date;
}

export interface EffectiveTenantLimits {
  perSec: number;
  perDay: number | null;
}

export async function findTenantLimitOverride(db: Queryable, tenantId: string): Promise<TenantLimitOverride | undefined> {
  const [row] = await db<TenantLimitOverride[]>`select * from tenant_rate_limits where tenant_id = ${tenantId}`;
  return row;
}

export class TenantLimits {
  private readonly cache = new Map<string, { value: EffectiveTenantLimits; fetchedAt: number }>();

  constructor(
    private readonly db: Queryable,
    private readonly defaultPerSec: number,
    private readonly cacheMs: number,
    /** The clock of the cache's expiry (the process's injected clock, so a test can step past it). */
    private readonly now: () => number = Date.now,
  ) {}

  /** The cached limits if fresh, without a promise (the common case of the request guard); else undefined: call get(). */
  cached(tenantId: string): EffectiveTenantLimits | undefined {
    const hit = this.cache.get(tenantId);
    return hit && this.now() - hit.fetchedAt < this.cacheMs ? hit.value : undefined;
  }

  async get(tenantId: string): Promise<EffectiveTenantLimits> {
    const hit = this.cached(tenantId);
    if (hit) return hit;
    const row = await findTenantLimitOverride(this.db, tenantId);
    const value = { perSec: row?.api_requests_per_sec ?? this.defaultPerSec, perDay: row?.api_requests_per_day ?? null };
    if (this.cache.size > 50_000) this.cache.clear();
    this.cache.set(tenantId, { value, fetchedAt: this.now() });
    return value;
  }

  forget(tenantId: string): void {
    this.cache.delete(tenantId);
  }
}
