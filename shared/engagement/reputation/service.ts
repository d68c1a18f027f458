// The reputation report of a tenant: per sending domain, rates over 1, 7 and 30 days, the warm-up tier with today's cap and count, and the trust score.
import type { Clock } from '../../kernel/clock.js';
import type { WarmupConfig } from '../../config/index.js';
import type { Queryable } from '../../db/connection.js';
import { capForTier, utcDay } from '../../deliverability/warmup/tiers.js';
import { domainsWithWarmup, windowCounts, type WindowCounts } from './queries.js';
import { trustScore, type Rates, type TrustScore } from './trust-score.js';

export const WINDOWS = [1, 7, 30] as const;
/** The window the trust score is computed over. */
export const SCORE_WINDOW = 30;
const DAY = 86_400_000;

export interface ReputationDeps {
  sql: Queryable;
  clock: Clock;
  warmup: WarmupConfig;
}

export interface WindowReport extends Rates {
  days: number;
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  engaged: number;
}

export interface DomainReputation {
  domain_id: string;
  domain: string;
  verified: boolean;
  windows: WindowReport[];
  warmup: { tier: number; daily_cap: number; sent_today: number; remaining_today: number };
  trust_score: TrustScore | null;
}

/** A share rounded to 4 decimals (0.1234 = 12.34 %); null without a denominator. */
const rate = (n: number, d: number) => (d === 0 ? null : Math.round((n / d) * 10_000) / 10_000);

export function windowReport(days: number, c: Omit<WindowCounts, 'domain_id' | 'days'> | undefined): WindowReport {
  const counts = c ?? { sent: 0, delivered: 0, bounced: 0, complained: 0, engaged: 0 };
  return {
    days,
    ...counts,
    delivery_rate: rate(counts.delivered, counts.sent),
    bounce_rate: rate(counts.bounced, counts.sent),
    complaint_rate: rate(counts.complained, counts.delivered),
    engagement_rate: rate(counts.engaged, counts.delivered),
  };
}

export async function reputationOf(deps: ReputationDeps, tenantId: string): Promise<{ domains: DomainReputation[]; generated_at: string }> {
  const now = deps.clock.now();
  const windows = WINDOWS.map((days) => ({ days, since: new Date(now.getTime() - days * DAY) }));
  const [domains, counts] = await Promise.all([domainsWithWarmup(deps.sql, tenantId, utcDay(now)), windowCounts(deps.sql, tenantId, windows, now)]);
  const byKey = new Map(counts.map((c) => [`${c.domain_id}/${c.days}`, c]));
  return {
    generated_at: now.toISOString(),
    domains: domains.map((d) => {
      const reports = WINDOWS.map((days) => windowReport(days, byKey.get(`${d.id}/${days}`)));
      // The gate resets an idle domain to tier 0 on its next send: report the tier that send would get.
      const idle = d.last_send_at !== null && now.getTime() - d.last_send_at.getTime() > deps.warmup.reset_after_idle_days * DAY;
      const tier = d.tier === null || idle ? 0 : d.tier;
      const cap = capForTier(deps.warmup, tier);
      return {
        domain_id: d.id,
        domain: d.name,
        verified: d.verified_at !== null,
        windows: reports,
        warmup: { tier, daily_cap: cap, sent_today: d.sent_today, remaining_today: Math.max(0, cap - d.sent_today) },
        trust_score: trustScore(reports.find((r) => r.days === SCORE_WINDOW)!),
      };
    }),
  };
}
