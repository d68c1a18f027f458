// The trust score of a sending domain: one 0..100 figure from its 30-day delivery, bounce, complaint and engagement rates (docs/deliverability.md: Reputation).

/** Rates as fractions 0..1; null when their denominator is zero. */
export interface Rates {
  delivery_rate: number | null;
  bounce_rate: number | null;
  complaint_rate: number | null;
  engagement_rate: number | null;
}

export const TRUST_TIERS = ['excellent', 'good', 'caution', 'at-risk'] as const;
export type TrustTier = (typeof TRUST_TIERS)[number];

/**
 * Weights and the rate at which each factor scores nothing (or, for engagement, everything). The thresholds follow
 * the warm-up auto-ramp's "bad" class: 5 % bounces or 0.3 % complaints score zero on that factor.
 */
export const WEIGHTS = { delivery: 0.35, bounce: 0.3, complaint: 0.25, engagement: 0.1 } as const;
const DELIVERY_FLOOR = 0.8;
const BOUNCE_CEILING = 0.05;
const COMPLAINT_CEILING = 0.003;
const ENGAGEMENT_TARGET = 0.2;

const clamp = (x: number) => Math.min(1, Math.max(0, x));

export interface TrustScore {
  score: number;
  tier: TrustTier;
  factors: { name: 'delivery' | 'bounce' | 'complaint' | 'engagement'; weight: number; value: number }[];
}

/**
 * score = round(100 × (0.35·D + 0.30·B + 0.25·C + 0.10·E)) where
 * D = clamp((delivery_rate − 0.80) / 0.20), B = 1 − clamp(bounce_rate / 0.05),
 * C = 1 − clamp(complaint_rate / 0.003), E = clamp(engagement_rate / 0.20).
 * Null without any sent mail in the window (nothing to judge). With sends but none delivered, C is 1 (no complaint
 * possible) and E is 0. Tier: excellent ≥ 90, good ≥ 75, caution ≥ 50, at-risk below.
 */
export function trustScore(rates: Rates): TrustScore | null {
  if (rates.delivery_rate === null || rates.bounce_rate === null) return null;
  const factors: TrustScore['factors'] = [
    { name: 'delivery', weight: WEIGHTS.delivery, value: clamp((rates.delivery_rate - DELIVERY_FLOOR) / (1 - DELIVERY_FLOOR)) },
    { name: 'bounce', weight: WEIGHTS.bounce, value: 1 - clamp(rates.bounce_rate / BOUNCE_CEILING) },
    { name: 'complaint', weight: WEIGHTS.complaint, value: rates.complaint_rate === null ? 1 : 1 - clamp(rates.complaint_rate / COMPLAINT_CEILING) },
    { name: 'engagement', weight: WEIGHTS.engagement, value: rates.engagement_rate === null ? 0 : clamp(rates.engagement_rate / ENGAGEMENT_TARGET) },
  ];
  const score = Math.round(100 * factors.reduce((sum, f) => sum + f.weight * f.value, 0));
  const rounded = factors.map((f) => ({ ...f, value: Math.round(f.value * 10_000) / 10_000 }));
  return { score, tier: tierOf(score), factors: rounded };
}

export function tierOf(score: number): TrustTier {
  if (score >= 90) return 'excellent';
  if (score >= 75) return 'good';
  if (score >= 50) return 'caution';
  return 'at-risk';
}
