// config/warmup.yaml: the daily cap of each warm-up tier and when an idle domain starts again.
import { z } from 'zod';

export const warmupSchema = z.strictObject({
  tier_caps: z
    .array(z.number().int().min(1).max(10_000_000))
    .min(1)
    .refine((caps) => caps.every((cap, i) => i === 0 || cap > caps[i - 1]!), 'each tier must allow more than the one below'),
  reset_after_idle_days: z.number().int().min(1).max(365),
});

export type WarmupConfig = z.infer<typeof warmupSchema>;
