// config/workers.yaml: when a scheduled worker's failing ticks raise an alert, whether its recovery is announced, and the thresholds of the daily tenant health
// checks.
import { z } from 'zod';

export const workersSchema = z.strictObject({
  alert_after_failures: z.number().int().min(1).max(1000),
  notify_recovery: z.boolean(),
  health_checks: z
    .strictObject({
      rates_window_days: z.number().int().min(1).max(90),
      min_sends_for_rates: z.number().int().min(0),
      bounce_rate_warn: z.number().min(0).max(1),
      bounce_rate_fail: z.number().min(0).max(1),
      complaint_rate_warn: z.number().min(0).max(1),
      complaint_rate_fail: z.number().min(0).max(1),
      quota_warn_pct: z.number().min(0).max(1000),
      quota_fail_pct: z.number().min(0).max(1000),
      dead_letter_window_days: z.number().int().min(1).max(90),
      dead_letter_warn: z.number().int().min(1),
      dead_letter_fail: z.number().int().min(1),
    })
    .refine((h) => h.bounce_rate_warn <= h.bounce_rate_fail, { message: 'bounce_rate_warn must not exceed bounce_rate_fail' })
    .refine((h) => h.complaint_rate_warn <= h.complaint_rate_fail, { message: 'complaint_rate_warn must not exceed complaint_rate_fail' })
    .refine((h) => h.quota_warn_pct <= h.quota_fail_pct, { message: 'quota_warn_pct must not exceed quota_fail_pct' })
    .refine((h) => h.dead_letter_warn <= h.dead_letter_fail, { message: 'dead_letter_warn must not exceed dead_letter_fail' }),
});

export type WorkersConfig = z.infer<typeof workersSchema>;
