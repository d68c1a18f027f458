// config/observability.yaml: the metrics scrape's queue-depth caching, Mailpath's own query timing and the slow-query thresholds.
import { z } from 'zod';

export const observabilitySchema = z.strictObject({
  metrics: z.strictObject({
    queue_depth_cache_ms: z.number().int().min(0).max(600_000),
  }),
  query_timing: z.strictObject({
    enabled: z.boolean(),
    window_minutes: z.number().int().min(1).max(60),
    flush_interval_seconds: z.number().int().min(1).max(3600),
    max_statements_per_window: z.number().int().min(10).max(100_000),
    samples_per_statement: z.number().int().min(10).max(10_000),
    retention_hours: z
      .number()
      .int()
      .min(168)
      .max(24 * 90),
  }),
  slow_queries: z.strictObject({
    warn_ms: z.number().min(0),
    error_ms: z.number().min(0),
  }),
});

export type ObservabilityConfig = z.infer<typeof observabilitySchema>;
