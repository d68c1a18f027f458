// config/bounce-mailboxes.yaml: how the POP3 bounce mailboxes are reached and polled.
import { z } from 'zod';

export const bounceMailboxesSchema = z.strictObject({
  allow_private_addresses: z.boolean(),
  timeout_ms: z.number().int().min(1000).max(300_000),
  mailboxes_per_tick: z.number().int().min(1).max(1000),
  mailboxes_per_tenant_per_tick: z.number().int().min(1).max(1000),
  concurrent_polls: z.number().int().min(1).max(64),
  max_messages_per_poll: z.number().int().min(1).max(10_000),
  max_message_bytes: z
    .number()
    .int()
    .min(1024)
    .max(100 * 1024 * 1024),
  min_poll_interval_s: z.number().int().min(60).max(86_400),
});

export type BounceMailboxesConfig = z.infer<typeof bounceMailboxesSchema>;
