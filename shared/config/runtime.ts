// config/runtime.yaml: how a Mailpath process schedules its own threads.
import { z } from 'zod';

export const runtimeSchema = z.strictObject({
  helper_thread_nice: z.number().int().min(0).max(19),
});

export type RuntimeConfig = z.infer<typeof runtimeSchema>;
