// The tenant's trust score: the reputation formula (shared/engagement/reputation/trust-score.ts) over the 30-day outcomes of all its sending domains together.
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { windowCounts } from '../reputation/queries.js';
import { SCORE_WINDOW, windowReport } from '../reputation/service.js';
import { tierOf, trustScore, WEIGHTS, type TrustScore } from '../reputation/trust-score.js';

export interface TenantTrustScore {
  score: number;
  tier: TrustScore['tier'];
  factors: TrustScore['factors'];
  /** `sends`: computed from the window's outcomes; `no_sends`: the new-sender baseline (nothing to judge yet). */
  basis: 'sends' | 'no_sends';
  updated_at: string;
}

/**
 * A tenant without delivered or bounced live mail in the window has no record to judge: it gets the new-sender
 * baseline, every factor at 0.5 (neither proven nor failed), so score 50 and tier caution, as a new sender's reputation
 * stands at the mailbox providers until mail builds it up.
 */
export function newSenderBaseline(): Pick<TenantTrustScore, 'score' | 'tier' | 'factors'> {
  const factors = (['delivery', 'bounce', 'complaint', 'engagement'] as const).map((name) => ({ name, weight: WEIGHTS[name], value: 0.5 }));
  const score = Math.round(100 * factors.reduce((sum, f) => sum + f.weight * f.value, 0));
  return { score, tier: tierOf(score), factors };
}

/** Computed on each call from live sends (cheap: one pass over 30 days of sends); the new-sender baseline without any. */
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
  if (!score) return { ...newSenderBaseline(), basis: 'no_sends', updated_at: now.toISOString() };
  return { score: score.score, tier: score.tier, factors: score.factors, basis: 'sends', updated_at: now.toISOString() };
}
