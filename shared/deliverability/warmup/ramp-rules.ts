// The auto-ramp's verdict for one domain and day, as data: the spec's healthy / mixed / bad table, the auto-pause, the idle reset, holds.
import type { WarmupConfig } from '../../config/index.js';

/** One UTC day's outcomes of a domain's live sends, and the rates the ramp judges. */
export interface DayRates {
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  bounce_rate: number;
  complaint_rate: number;
  delivery_rate: number;
}

export type RampClass = 'healthy' | 'mixed' | 'bad';

export type RampAction = 'promote' | 'hold' | 'demote' | 'pause' | 'reset';

export interface RampVerdict {
  action: RampAction;
  toTier: number;
  /**
   * Why, in a word an operator can filter on: healthy, mixed, bad_complaints, bad_bounces, bounce_pause, too_few_sends, idle, paused, held, top_tier,
   * bottom_tier.
   */
  reason: string;
  class: RampClass | null;
}

export function ratesOf(counts: { sent: number; delivered: number; bounced: number; complained: number }): DayRates {
  const of = (n: number) => (counts.sent === 0 ? 0 : n / counts.sent);
  return { ...counts, bounce_rate: of(counts.bounced), complaint_rate: of(counts.complained), delivery_rate: of(counts.delivered) };
}

type RampConfig = WarmupConfig['auto_ramp'];

/** The spec's table: healthy when all three are good, bad when either bad threshold is passed, mixed otherwise. */
export function classify(c: RampConfig, r: DayRates): RampClass {
  if (r.bounce_rate > c.bad_bounce_rate_above || r.complaint_rate > c.bad_complaint_rate_above) return 'bad';
  if (r.bounce_rate < c.healthy_bounce_rate_below && r.complaint_rate < c.healthy_complaint_rate_below && r.delivery_rate > c.healthy_delivery_rate_above) {
    return 'healthy';
  }
  return 'mixed';
}

export interface DomainState {
  tier: number;
  paused: boolean;
  /** A super-admin's freeze is in force. */
  held: boolean;
  /** Days (fractional) since the domain last sent, or since its tier last changed if it never sent. */
  idleDays: number;
}

/**
 * The move for one domain. Order matters: an idle spell resets the tier whatever else holds (receivers
 * forget a quiet sender), a paused domain is left alone, a day too thin to judge holds, then the rates
 * decide. A bad day pauses instead of demoting when its bounce rate reaches pause_bounce_rate_at (the
 * spec's "or auto-pause the domain at 3% bounces"); a freeze stops promotions and demotions, not the pause.
 */
export function decide(
  config: Pick<WarmupConfig, 'auto_ramp' | 'tier_caps' | 'reset_after_idle_days' | 'initial_tier'>,
  s: DomainState,
  r: DayRates,
): RampVerdict {
  const c = config.auto_ramp;
  const top = config.tier_caps.length - 1;
  const hold = (reason: string, cls: RampClass | null = null): RampVerdict => ({ action: 'hold', toTier: s.tier, reason, class: cls });
  if (r.sent === 0 && s.idleDays > config.reset_after_idle_days) {
    return s.tier > config.initial_tier ? { action: 'reset', toTier: config.initial_tier, reason: 'idle', class: null } : hold('idle');
  }
  if (s.paused) return hold('paused');
  if (r.sent < c.min_sends_to_judge) return hold('too_few_sends');
  const cls = classify(c, r);
  if (cls === 'bad') {
    if (r.bounce_rate >= c.pause_bounce_rate_at) return { action: 'pause', toTier: s.tier, reason: 'bounce_pause', class: cls };
    if (s.held) return hold('held', cls);
    const why = r.complaint_rate > c.bad_complaint_rate_above ? 'bad_complaints' : 'bad_bounces';
    return s.tier > 0 ? { action: 'demote', toTier: s.tier - 1, reason: why, class: cls } : hold('bottom_tier', cls);
  }
  if (cls === 'mixed') return hold('mixed', cls);
  if (s.held) return hold('held', cls);
  return s.tier < top ? { action: 'promote', toTier: s.tier + 1, reason: 'healthy', class: cls } : hold('top_tier', cls);
}
