// config/delivery.yaml: the retry curve, connections per destination, SMTP client timeouts and the delivery workers.
import { z } from 'zod';

export const deliverySchema = z.strictObject({
  retry: z.strictObject({
    first_retry_minutes: z
      .number()
      .positive()
      .max(24 * 60),
    factor: z.number().min(1).max(10),
    max_interval_minutes: z
      .number()
      .positive()
      .max(7 * 24 * 60),
    max_age_hours: z
      .number()
      .positive()
      .max(30 * 24),
  }),
  destination: z.strictObject({
    max_connections: z.number().int().min(1).max(1000),
    max_messages_per_connection: z.number().int().min(1).max(100_000),
    idle_close_ms: z.number().int().min(0).max(600_000),
  }),
  timeouts: z.strictObject({
    connect_ms: z.number().int().min(100).max(600_000),
    greeting_ms: z.number().int().min(100).max(600_000),
    socket_ms: z.number().int().min(100).max(3_600_000),
  }),
  workers: z.strictObject({
    batch_size: z.number().int().min(1).max(1000),
    concurrency: z.number().int().min(1).max(10_000),
    poll_interval_ms: z.number().int().min(100).max(60_000),
    job_expire_seconds: z.number().int().min(1).max(86_400),
    queue_maintenance_seconds: z.number().int().min(1).max(3600),
  }),
});

export type DeliveryConfig = z.infer<typeof deliverySchema>;
