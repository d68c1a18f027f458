// The per-provider suppressions in force (shared/engagement/analytics/esp-suppressions.ts raises them from delivery refusals), as the
// send path asks about them: every send asks, and there are only a handful, so the whole set is read at most every few
// seconds per process and answered from memory.
import type { Clock } from '../kernel/clock.js';
import type { Queryable } from '../db/connection.js';
import { activeEspSuppressions } from '../engagement/analytics/queries.js';

/** How stale the set may be: a suppression raised by another process holds new sends within this long. */
export const ESP_HOLDS_TTL_MS = 5000;

export interface EspHolds {
  /** Until when sends of the tenant to the provider are held, or null when none is in force at `at`. */
  heldUntil(tenantId: string, provider: string, at: Date): Promise<Date | null>;
}

export function createEspHolds(db: Queryable, clock: Clock, ttlMs = ESP_HOLDS_TTL_MS): EspHolds {
  let held = new Map<string, Date>();
  let loadedAt = -Infinity;
  let loading: Promise<void> | undefined;
  const refresh = async () => {
    const now = clock.now();
    const rows = await activeEspSuppressions(db, now);
    held = new Map(rows.map((r) => [`${r.tenant_id} ${r.provider}`, r.expires_at]));
    loadedAt = now.getTime();
  };
  return {
    async heldUntil(tenantId, provider, at) {
      // One read answers every send that asks while it runs.
      if (clock.now().getTime() - loadedAt >= ttlMs) await (loading ??= refresh().finally(() => (loading = undefined)));
      const until = held.get(`${tenantId} ${provider}`);
      return until && until > at ? until : null;
    },
  };
}
