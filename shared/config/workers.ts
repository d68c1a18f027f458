// config/workers.yaml: when a scheduled worker's failing ticks raise an alert, and whether its recovery is announced.
import { z } from 'zod';

export const workersSchema = z.strictObject({
  alert_after_failures: z.number().int().min(1).max(1000),
  notify_recovery: z.boolean(),
});

export type WorkersConfig = z.infer<typeof workersSchema>;
