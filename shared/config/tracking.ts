// config/tracking.yaml: which opens and clicks are flagged as machine traffic, and how many hits one commit holds.
import { z } from 'zod';

/** A case-insensitive regular expression, checked to compile when the configuration loads. */
const pattern = z
  .string()
  .min(1)
  .max(500)
  .refine((source) => {
    try {
      new RegExp(source, 'i');
      return true;
    } catch {
      return false;
    }
  }, 'must be a valid regular expression');

export const trackingSchema = z.strictObject({
  machine_opens: z.strictObject({
    user_agents: z.array(pattern).max(200),
    proxy_user_agents: z.array(pattern).max(200),
    proxy_window_seconds: z.number().int().min(0).max(86_400),
    bots: z.boolean(),
  }),
  scanner_clicks: z.strictObject({
    user_agents: z.array(pattern).max(200),
    delivery_window_seconds: z.number().int().min(0).max(86_400),
    all_links_window_seconds: z.number().int().min(0).max(3600),
    all_links_min: z.number().int().min(2).max(1000),
    bots: z.boolean(),
  }),
  click_pages: z
    .strictObject({
      suspended_check_seconds: z.number().min(0).max(600).default(10),
    })
    .prefault({}),
  repeat_opens: z
    .strictObject({
      window_seconds: z.number().int().min(0).max(3600).default(60),
    })
    .prefault({}),
  recorder: z.strictObject({
    max_batch: z.number().int().min(1).max(5000),
    concurrency: z.number().int().min(1).max(16).default(1),
    thread: z.boolean().default(true),
    spool: z
      .strictObject({
        enabled: z.boolean().default(true),
        segment_hits: z.number().int().min(100).max(1_000_000).default(20_000),
        max_pending: z.number().int().min(100).max(10_000_000).default(100_000),
        retry_ms: z.number().int().min(10).max(60_000).default(1_000),
        orphan_scan_seconds: z.number().int().min(1).max(3_600).default(60),
      })
      .prefault({}),
  }),
});

export type TrackingConfig = z.infer<typeof trackingSchema>;
