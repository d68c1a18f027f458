// config/webhooks.yaml: the inbound-webhook URL policy, receiver timeout, retry schedule and workers.
import { z } from 'zod';

export const webhooksSchema = z.strictObject({
  allow_http: z.boolean(),
  allow_private_addresses: z.boolean(),
  timeout_seconds: z.number().min(0.1).max(120),
  retry_delays_seconds: z
    .array(z.number().int().min(1).max(86_400))
    .min(1)
    .max(20)
    .refine((delays) => delays.every((d, i) => i === 0 || d >= delays[i - 1]!), 'each wait must be at least the one before'),
  workers: z.strictObject({
    batch_size: z.number().int().min(1).max(500),
    poll_interval_ms: z.number().int().min(500).max(60_000),
  }),
});

export type WebhooksConfig = z.infer<typeof webhooksSchema>;
