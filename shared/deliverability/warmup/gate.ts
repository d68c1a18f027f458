// The warm-up gate: allow while the (tenant, domain) counter of the UTC day is below the tier cap, else defer to 00:00 UTC, or drop a suppressed recipient;
// a paused domain defers.
import type { WarmupConfig } from '../../config/index.js';
import type { Queryable } from '../../db/connection.js';
import { consumeDaily, resetTier, touchLastSend, warmupOf, type WarmupRow } from './queries.js';
import { capForTier, nextUtcMidnight, utcDay } from './tiers.js';

export type WarmupDecision =
  | { outcome: 'allow'; tier: number; cap: number; sentToday: number }
  | { outcome: 'defer'; tier: number; cap: number; until: Date; paused?: true }
  | { outcome: 'drop'; tier: number; cap: number; reason: 'suppressed' };

const DAY_MS = 86_400_000;

/** How the gate reads the warm-up row and takes from the daily counter (batched on the send path). */
export interface WarmupCounters {
  warmupOf(tenantId: string, domainId: string, at: Date): Promise<WarmupRow>;
  takeDaily(c: { tenantId: string; domainId: string; day: string; cap: number }): Promise<number | undefined>;
}

/**
 * The tier a domain's next send is judged at: its row's, or the initial tier once it has been idle longer than
 * reset_after_idle_days (receivers forget a quiet sender; a domain demoted below the initial tier stays there).
 */
export function effectiveTier(
  config: Pick<WarmupConfig, 'reset_after_idle_days' | 'initial_tier'>,
  row: Pick<WarmupRow, 'tier' | 'last_send_at'>,
  at: Date,
): number {
  const idle = row.last_send_at !== null && at.getTime() - row.last_send_at.getTime() > config.reset_after_idle_days * DAY_MS;
  return idle && row.tier > config.initial_tier ? config.initial_tier : row.tier;
}

/**
 * Evaluates the gate for one send and, when it allows, counts the send. `recipientSuppressed`
 * matters only over the cap: suppression wins over deferral (a deferred send to a suppressed
 * address would only be dropped tomorrow). Given as a function, it is asked only then, so the
 * common case below the cap costs no suppression look-up.
 */
export async function warmupGate(
  db: Queryable,
  config: Pick<WarmupConfig, 'tier_caps' | 'reset_after_idle_days' | 'initial_tier'>,
  s: { tenantId: string; domainId: string; at: Date; recipientSuppressed: boolean | (() => Promise<boolean>) },
  counters: WarmupCounters = {
    warmupOf: (tenantId, domainId, at) => warmupOf(db, tenantId, domainId, at, config.initial_tier),
    takeDaily: (c) => consumeDaily(db, c),
  },
): Promise<WarmupDecision> {
  const warmup = await counters.warmupOf(s.tenantId, s.domainId, s.at);
  const tier = effectiveTier(config, warmup, s.at);
  if (tier !== warmup.tier) await resetTier(db, s.domainId, s.at, tier);
  const cap = capForTier(config, tier);
  // A paused domain sends nothing: each day's wake-up defers again until a super-admin resumes it.
  if (warmup.paused_at) return { outcome: 'defer', tier, cap, until: nextUtcMidnight(s.at), paused: true };
  const day = utcDay(s.at);
  const sentToday = await counters.takeDaily({ tenantId: s.tenantId, domainId: s.domainId, day, cap });
  if (sentToday === undefined) {
    const suppressed = typeof s.recipientSuppressed === 'function' ? await s.recipientSuppressed() : s.recipientSuppressed;
    return suppressed ? { outcome: 'drop', tier, cap, reason: 'suppressed' } : { outcome: 'defer', tier, cap, until: nextUtcMidnight(s.at) };
  }
  if (sentToday === 1) await touchLastSend(db, s.domainId, s.at, new Date(`${day}T00:00:00Z`));
  return { outcome: 'allow', tier, cap, sentToday };
}
