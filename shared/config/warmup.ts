// config/warmup.yaml: the daily cap of each warm-up tier, when an idle domain starts again, the auto-ramp thresholds and the per-ESP sub-caps.
import { z } from 'zod';

const rate = z.number().min(0).max(1);

export const warmupSchema = z
  .strictObject({
    tier_caps: z
      .array(z.number().int().min(1).max(10_000_000))
      .min(1)
      .refine((caps) => caps.every((cap, i) => i === 0 || cap > caps[i - 1]!), 'each tier must allow more than the one below'),
    /** The tier a new domain starts at and an idle one returns to (0 in production; dev mode starts higher). */
    initial_tier: z.number().int().min(0).default(0),
    reset_after_idle_days: z.number().int().min(1).max(365),
    auto_ramp: z.strictObject({
      min_sends_to_judge: z.number().int().min(1).max(1_000_000),
      healthy_bounce_rate_below: rate,
      healthy_complaint_rate_below: rate,
      healthy_delivery_rate_above: rate,
      bad_bounce_rate_above: rate,
      bad_complaint_rate_above: rate,
      pause_bounce_rate_at: rate,
    }),
    per_esp_caps: z.partialRecord(
      z.enum(['gmail', 'outlook', 'yahoo', 'aol', 'icloud', 'proton', 'fastmail', 'other']),
      z.number().int().min(0).max(10_000_000),
    ),
    schedule_from_local_part: z.string().regex(/^[a-z0-9][a-z0-9._+-]{0,63}$/i),
    /** Set from WARMUP_PER_ESP_ENFORCE (not from the file): sub-caps defer sends instead of only counting them. */
    per_esp_enforce: z.boolean().default(false),
  })
  .refine((c) => c.initial_tier < c.tier_caps.length, { path: ['initial_tier'], message: 'must name one of tier_caps (counted from 0)' });

export type WarmupConfig = z.infer<typeof warmupSchema>;
