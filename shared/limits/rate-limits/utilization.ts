// GET /admin/ratelimits: each busy or throttled tenant's per-second cap against its recent peak, with its 429s of the last 5 minutes; each probe independent.
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { peakPerSecond, tenantCapacities, throttlesSince } from './queries.js';

/** `current` is the busiest second of this look-back: a peak, so a short burst near the cap shows. */
export const CURRENT_WINDOW_SECONDS = 10;
/** recent_throttle_count and last_throttle_at look back this far. */
export const THROTTLE_WINDOW_MINUTES = 5;

export interface TenantUtilization {
  tenant_id: string;
  tenant_name: string;
  capacity: number;
  current: number;
  utilization_pct: number;
  recent_throttle_count: number;
  last_throttle_at?: Date;
}

export interface UtilizationReport {
  as_of: Date;
  items: TenantUtilization[];
  /** The probes that failed ('current', 'throttles', 'tenants'), each with its message; their figures read as 0. */
  errors: { probe: string; message: string }[];
}

async function probe<T>(name: string, errors: UtilizationReport['errors'], fallback: T, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    errors.push({ probe: name, message: (err as Error).message || String(err) });
    return fallback;
  }
}

/**
 * Tenants that sent in the last CURRENT_WINDOW_SECONDS, were refused in the last THROTTLE_WINDOW_MINUTES, or
 * carry a per-second override, sorted by utilization desc, then throttle count desc, then name asc. The counts are
 * the shared ones every process syncs (within sync_interval_ms). A failing probe leaves its figures at 0 and is named in errors.
 */
export async function rateLimitUtilization(deps: { sql: Queryable; clock: Clock; defaultPerSec: number }): Promise<UtilizationReport> {
  const now = deps.clock.now();
  const errors: UtilizationReport['errors'] = [];
  const [peaks, throttles] = await Promise.all([
    probe('current', errors, new Map<string, number>(), () => peakPerSecond(deps.sql, new Date(now.getTime() - CURRENT_WINDOW_SECONDS * 1000))),
    probe('throttles', errors, new Map<string, { count: number; last_at: Date }>(), () =>
      throttlesSince(deps.sql, new Date(now.getTime() - THROTTLE_WINDOW_MINUTES * 60_000)),
    ),
  ]);
  const ids = [...new Set([...peaks.keys(), ...throttles.keys()])];
  const tenants = await probe('tenants', errors, [], () => tenantCapacities(deps.sql, ids));
  const items = tenants.map((t): TenantUtilization => {
    const capacity = t.override_per_sec ?? deps.defaultPerSec;
    const current = peaks.get(t.tenant_id) ?? 0;
    const throttled = throttles.get(t.tenant_id);
    return {
      tenant_id: t.tenant_id,
      tenant_name: t.tenant_name,
      capacity,
      current,
      utilization_pct: Math.round((current / capacity) * 1000) / 10,
      recent_throttle_count: throttled?.count ?? 0,
      ...(throttled ? { last_throttle_at: throttled.last_at } : {}),
    };
  });
  items.sort(
    (a, b) =>
      b.utilization_pct - a.utilization_pct ||
      b.recent_throttle_count - a.recent_throttle_count ||
      (a.tenant_name < b.tenant_name ? -1 : a.tenant_name > b.tenant_name ? 1 : 0),
  );
  return { as_of: now, items, errors };
}
