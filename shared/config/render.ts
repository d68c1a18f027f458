// config/render.yaml: the render threads, the render budgets of a request and of a campaign batch, and each tenant's share of the threads.
import { z } from 'zod';

export const renderSchema = z.strictObject({
  threads: z.number().int().min(0).max(64),
  thread_nice: z.number().int().min(0).max(19),
  thread_heap_mb: z.number().int().min(32).max(4096),
  request_budget_ms: z.number().int().min(10).max(60_000),
  campaign_batch_budget_ms: z.number().int().min(10).max(600_000),
  campaign_job_items: z.number().int().min(1).max(1000),
  deadline_grace_ms: z.number().int().min(10).max(60_000),
  per_tenant_running: z.number().int().min(1).max(64),
  per_tenant_queued: z.number().int().min(0).max(10_000),
  retry_after_seconds: z.number().int().min(1).max(3600),
});

export type RenderConfig = z.infer<typeof renderSchema>;
