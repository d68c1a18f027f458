// The lifecycle vocabulary of a campaign: its statuses and why a sending one waits (the API's enums, the stored values of queries.ts).
export const CAMPAIGN_STATUSES = ['draft', 'scheduled', 'sending', 'paused', 'sent', 'cancelled', 'failed'] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

/** Why a sending campaign is not sending right now (quota_exceeded and render_budget: why the worker paused it). */
export const WAITING_REASONS = ['warmup_cap', 'tenant_suspended', 'quota_exceeded', 'ab_winner', 'render_budget'] as const;
export type WaitingReason = (typeof WAITING_REASONS)[number];
