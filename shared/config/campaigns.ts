// config/campaigns.yaml: how a campaign's target is materialized and how its fan-out is batched, leased and sliced into jobs.
import { z } from 'zod';

export const campaignsSchema = z.strictObject({
  materialize: z.strictObject({
    page_size: z.number().int().min(1).max(10_000),
  }),
  fanout: z.strictObject({
    batch_size: z.number().int().min(1).max(5000),
    claim_lease_seconds: z.number().int().min(5).max(86_400),
    slice_seconds: z.number().int().min(1).max(3600),
    parallel_jobs: z.number().int().min(1).max(64),
    workers: z.number().int().min(1).max(64),
    job_expire_seconds: z.number().int().min(10).max(86_399),
    suspended_recheck_seconds: z.number().int().min(1).max(86_400),
  }),
});

export type CampaignsConfig = z.infer<typeof campaignsSchema>;
