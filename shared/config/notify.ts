// config/notify.yaml: how operator notifications reach the chat webhook (timeout, retries).
import { z } from 'zod';

export const notifySchema = z.strictObject({
  chat: z.strictObject({
    timeout_ms: z.number().int().min(100).max(120_000),
    retry_limit: z.number().int().min(0).max(50),
    retry_delay_seconds: z.number().int().min(1).max(3600),
  }),
});

export type NotifyConfig = z.infer<typeof notifySchema>;
