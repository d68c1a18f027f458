// SQL for the rate-limit admin side: tenant overrides, the per-minute log of refusals, and what GET /admin/ratelimits reads.
import type { Queryable } from '../../db/connection.js';
import type { TenantLimitOverride } from './tenant-limits.js';

export interface ThrottleDelta {
  tenantId: string;
  minuteStart: Date;
  count: number;
  lastAt: Date;
}

/** Adds refusals per tenant and minute; a tenant deleted meanwhile is skipped (its rows went with it). */
export async function addThrottles(db: Queryable, deltas: ThrottleDelta[]): Promise<void> {
  if (deltas.length === 0) return;
  await db`
    insert into rate_limit_throttles (tenant_id, minute_start, count, last_at)
    select d.tenant_id, d.minute_start, d.count, d.last_at
    from unnest(
      ${deltas.map((d) => d.tenantId)}::uuid[],
      ${deltas.map((d) => d.minuteStart.toISOString())}::timestamptz[],
      ${deltas.map((d) => d.count)}::int[],
      ${deltas.map((d) => d.lastAt.toISOString())}::timestamptz[]) as d(tenant_id, minute_start, count, last_at)
    join tenants t on t.id = d.tenant_id
    on conflict (tenant_id, minute_start) do update set
      count = rate_limit_throttles.count + excluded.count,
      last_at = greatest(rate_limit_throttles.last_at, excluded.last_at)`;
}

export async function deleteExpiredThrottles(db: Queryable, before: Date): Promise<void> {
  await db`delete from rate_limit_throttles where minute_start < ${before}`;
}

export interface OverrideInput {
  api_requests_per_sec: number | null;
  api_requests_per_day: number | null;
  notes: string | null;
}

/** Sets the override; all three null removes it (the global default applies). Returns the row, or undefined when removed. */
export async function putTenantLimitOverride(db: Queryable, tenantId: string, o: OverrideInput, at: Date): Promise<TenantLimitOverride | undefined> {
  if (o.api_requests_per_sec === null && o.api_requests_per_day === null && o.notes === null) {
    await db`delete from tenant_rate_limits where tenant_id = ${tenantId}`;
    return undefined;
  }
  const [row] = await db<TenantLimitOverride[]>`
    insert into tenant_rate_limits (tenant_id, api_requests_per_sec, api_requests_per_day, notes, updated_at)
    values (${tenantId}, ${o.api_requests_per_sec}, ${o.api_requests_per_day}, ${o.notes}, ${at})
    on conflict (tenant_id) do update set
      api_requests_per_sec = excluded.api_requests_per_sec, api_requests_per_day = excluded.api_requests_per_day,
      notes = excluded.notes, updated_at = excluded.updated_at
    returning *`;
  return row;
}

export interface TenantCapacity {
  tenant_id: string;
  tenant_name: string;
  /** The override's per-second cap, null when the global default applies. */
  override_per_sec: number | null;
}

/** Names and per-second overrides of the given tenants, plus every tenant that has an override. */
export async function tenantCapacities(db: Queryable, tenantIds: string[]): Promise<TenantCapacity[]> {
  return db<TenantCapacity[]>`
    select t.id as tenant_id, t.name as tenant_name, o.api_requests_per_sec as override_per_sec
    from tenants t left join tenant_rate_limits o on o.tenant_id = t.id
    where t.id = any(${tenantIds}::uuid[]) or o.api_requests_per_sec is not null`;
}

/** Each tenant's busiest one-second window since `since`, from the shared counters of its per-second bucket. */
export async function peakPerSecond(db: Queryable, since: Date): Promise<Map<string, number>> {
  const rows = await db<{ tenant_id: string; peak: number }[]>`
    select split_part(bucket, ':', 2) as tenant_id, max(count)::int as peak
    from rate_limit_counters
    where window_seconds = 1 and bucket like 'tenant:%:sec' and window_start >= ${since}
    group by 1`;
  return new Map(rows.map((r) => [r.tenant_id, r.peak]));
}

/** Refusals per tenant since `since` (whole minutes: a minute that began before it counts when its last refusal is after). */
export async function throttlesSince(db: Queryable, since: Date): Promise<Map<string, { count: number; last_at: Date }>> {
  const rows = await db<{ tenant_id: string; count: number; last_at: Date }[]>`
    select tenant_id, sum(count)::int as count, max(last_at) as last_at
    from rate_limit_throttles
    where minute_start > ${new Date(since.getTime() - 60_000)} and last_at >= ${since}
    group by tenant_id`;
  return new Map(rows.map((r) => [r.tenant_id, { count: r.count, last_at: r.last_at }]));
}
