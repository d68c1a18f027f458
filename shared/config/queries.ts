// config/queries.yaml: the deadlines of tenant-shaped queries (statement_timeout per kind) and how many run at once per tenant and per process.
import { z } from 'zod';

const deadline = z.number().int().min(50).max(3_600_000);

export const queriesSchema = z.strictObject({
  deadlines_ms: z.strictObject({
    segment: deadline,
    segment_materialize: deadline,
    contact_search: deadline,
    analytics: deadline,
    export: deadline,
  }),
  per_tenant: z.number().int().min(1).max(100),
  per_tenant_ms_per_minute: z.number().int().min(100).max(3_600_000),
  global: z.number().int().min(1).max(200),
  queue_wait_ms: z.number().int().min(0).max(60_000),
  retry_after_seconds: z.number().int().min(1).max(3600),
});

export type QueriesConfig = z.infer<typeof queriesSchema>;
/** The kinds of tenant-shaped query, each with its own deadline. */
export type QueryKind = keyof QueriesConfig['deadlines_ms'];
