// Warm-up tiers and UTC day arithmetic: the cap of a tier, the day a send counts on, when a deferred send may go.
import type { WarmupConfig } from '../../config/index.js';

/** The daily cap of a tier; tiers above the table use its last (fully warm) cap. */
export function capForTier(config: Pick<WarmupConfig, 'tier_caps'>, tier: number): number {
  const caps = config.tier_caps;
  return caps[Math.min(Math.max(0, tier), caps.length - 1)]!;
}

/** The UTC calendar day of an instant, as the date the counters are keyed by. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

/** 00:00 UTC of the day after `at`: when a send deferred by the warm-up gate is tried again. */
export function nextUtcMidnight(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1));
}

/** The first day of the UTC month of an instant (the quota period). */
export function utcMonth(at: Date): string {
  return `${at.toISOString().slice(0, 7)}-01`;
}

/** 00:00 UTC on the first day of the month after `at`: when the monthly quota starts counting again. */
export function nextUtcMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}
