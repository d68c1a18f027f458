// config/seedlist.yaml: how seed copies are sent with campaigns and when an unseen copy counts as missing.
import { z } from 'zod';

export const seedlistSchema = z.strictObject({
  missing_after_hours: z
    .number()
    .int()
    .min(1)
    .max(24 * 30),
  claim_batch: z.number().int().min(1).max(1000),
  mx_cache_ms: z.number().int().min(0).max(600_000),
});

export type SeedlistConfig = z.infer<typeof seedlistSchema>;
