// What an operator needs at a glance about one tenant: plan and quota use this month, sends in 24 hours, bounce and complaint rates, domains with their
// warm-up tier, suspension and sandbox.
import type { WarmupConfig } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { capForTier, utcMonth } from '../../deliverability/warmup/tiers.js';
import { deliveryCountsSince, liveSendsSince, planUse, tenantDomains } from './detail-queries.js';
import { getTenantSummary, type TenantSummary } from './queries.js';

/** Bounce and complaint rates look back this far: long enough to be meaningful for a small sender. */
export const RATES_WINDOW_DAYS = 30;
/** The detail shows at most this many domains (a tenant with more is listed through /domains). */
export const DETAIL_DOMAIN_LIMIT = 100;

const DAY_MS = 86_400_000;

export interface TenantDetail {
  tenant: TenantSummary;
  plan: { id: string; name: string; monthly_send_cap: number };
  quota: { month: string; used: number; cap: number; remaining: number; used_pct: number | null };
  sends_24h: number;
  rates: {
    window_days: number;
    sent: number;
    bounces: number;
    hard_bounces: number;
    complaints: number;
    /** bounces / sent, rounded to 4 places; null without sends in the window. */
    bounce_rate: number | null;
    complaint_rate: number | null;
  };
  domains: {
    id: string;
    name: string;
    verified: boolean;
    verified_at: Date | null;
    drifted: boolean;
    warmup_tier: number;
    warmup_daily_cap: number;
    last_send_at: Date | null;
  }[];
}

const ratio = (n: number, d: number) => (d === 0 ? null : Math.round((n / d) * 10_000) / 10_000);

export async function tenantDetail(
  deps: { sql: Queryable; clock: Clock; config: { warmup: WarmupConfig } },
  tenantId: string,
): Promise<TenantDetail | undefined> {
  const tenant = await getTenantSummary(deps.sql, tenantId);
  if (!tenant) return undefined;
  const now = deps.clock.now();
  const month = utcMonth(now);
  const [plan, sends24h, counts, domains] = await Promise.all([
    planUse(deps.sql, tenantId, month),
    liveSendsSince(deps.sql, tenantId, new Date(now.getTime() - DAY_MS)),
    deliveryCountsSince(deps.sql, tenantId, new Date(now.getTime() - RATES_WINDOW_DAYS * DAY_MS)),
    tenantDomains(deps.sql, tenantId, DETAIL_DOMAIN_LIMIT),
  ]);
  const cap = plan?.monthly_send_cap ?? 0;
  const used = plan?.used ?? 0;
  return {
    tenant,
    plan: { id: tenant.plan_id, name: plan?.plan_name ?? tenant.plan_id, monthly_send_cap: cap },
    quota: { month: month.slice(0, 7), used, cap, remaining: Math.max(0, cap - used), used_pct: cap === 0 ? null : Math.round((used / cap) * 1000) / 10 },
    sends_24h: sends24h,
    rates: {
      window_days: RATES_WINDOW_DAYS,
      ...counts,
      bounce_rate: ratio(counts.bounces, counts.sent),
      complaint_rate: ratio(counts.complaints, counts.sent),
    },
    domains: domains.map((d) => ({
      id: d.id,
      name: d.name,
      verified: d.verified_at !== null && d.drifted_at === null,
      verified_at: d.verified_at,
      drifted: d.drifted_at !== null,
      warmup_tier: d.warmup_tier,
      warmup_daily_cap: capForTier(deps.config.warmup, d.warmup_tier),
      last_send_at: d.last_send_at,
    })),
  };
}
