// The tenant's trust score: the reputation formula (shared/reputation/trust-score.ts) over the 30-day outcomes of all its sending domains together.
import type { Clock } from '../clock.js';
import type { Queryable } from '../db/connection.js';
import { windowCounts } from '../reputation/queries.js';
import { SCORE_WINDOW, windowReport } from '../reputation/service.js';
import { trustScore, type TrustScore } from '../reputation/trust-score.js';

export interface TenantTrustScore {
  score: number | null;
  tier: TrustScore['tier'] | null;
  factors: TrustScore['factors'];
  updated_at: string;
}

/** Computed on each call from live sends (cheap: one pass over 30 days of sends); null score without any. */
export async function tenantTrustScore(deps: { sql: Queryable; clock: Clock }, tenantId: string): Promise<TenantTrustScore> {
  const now = deps.clock.now();
  const since = new Date(now.getTime() - SCORE_WINDOW * 86_400_000);
  const counts = await windowCounts(deps.sql, tenantId, [{ days: SCORE_WINDOW, since }], now);
  const sum = { sent: 0, delivered: 0, bounced: 0, complained: 0, engaged: 0 };
  for (const c of counts) {
    sum.sent += c.sent;
    sum.delivered += c.delivered;
    sum.bounced += c.bounced;
    sum.complained += c.complained;
    sum.engaged += c.engaged;
  }
  const score = trustScore(windowReport(SCORE_WINDOW, sum));
  return { score: score?.score ?? null, tier: score?.tier ?? null, factors: score?.factors ?? [], updated_at: now.toISOString() };
}
