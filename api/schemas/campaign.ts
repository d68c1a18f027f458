// The campaign object of the API (full and as a list entry) with its progress, and how a stored campaign is presented.
import { z } from 'zod';
import type { CampaignRow, CampaignSummaryRow } from '../../shared/campaigns/queries.js';
import { CAMPAIGN_STATUSES, WAITING_REASONS } from '../../shared/campaigns/statuses.js';
import type { CampaignView } from '../../shared/campaigns/service.js';
import { iso, timestamp } from './common.js';

const count = z.number().int();

export const progress = z
  .object({
    targeted: count.describe('Recipients fixed when sending started (the target, skipped ones included)'),
    skipped: z
      .object({
        unsubscribed: count,
        deleted: count,
        suppressed: count.describe('On the suppression list (also dropped by the send gate after the target was fixed)'),
        md5_listed: count.describe("On the campaign's MD5 list"),
        invalid: count.describe('No usable address, or a message that could not be rendered or was too large'),
        cancelled: count.describe('Not sent because the campaign was cancelled'),
      })
      .describe('Recipients not sent, by reason'),
    skipped_total: count,
    queued: count.describe('Recipients handed to the send path (their send exists)'),
    remaining: count.describe('Recipients still to send: targeted - skipped - queued (includes the A/B remainder waiting for its winner)'),
    sent: count.describe('Sends accepted for delivery (delivery-side counters)'),
    delivered: count,
    deferred: count,
    failed: count,
    targeting_complete: z.boolean().describe('Whether every page of the target is in (targeted is final)'),
  })
  .describe('Progress counters, kept as the fan-out goes (not recounted)');

const common = {
  id: z.string(),
  name: z.string(),
  status: z.enum(CAMPAIGN_STATUSES),
  subject: z.string().nullable(),
  subject_b: z.string().nullable(),
  preheader_text: z.string().nullable(),
  from_email: z.string().nullable(),
  from_name: z.string().nullable(),
  reply_to: z.string().nullable(),
  list_id: z.string().nullable(),
  segment_id: z.string().nullable(),
  template_id: z.string().nullable(),
  md5_list_id: z.string().nullable(),
  ab_split_pct: z.number().int().nullable(),
  ab_metric: z.enum(['open', 'click']),
  ab_winner: z.enum(['a', 'b']).nullable(),
  ab_winner_declared_at: timestamp.nullable(),
  send_time_optimization: z.boolean().describe('Stored toggle only'),
  utm_tagging: z.boolean(),
  utm_source: z.string().nullable(),
  utm_medium: z.string().nullable(),
  utm_campaign: z.string().nullable(),
  track_opens: z.boolean(),
  track_clicks: z.boolean(),
  scheduled_at: timestamp.nullable(),
  started_at: timestamp.nullable(),
  finished_at: timestamp.nullable(),
  paused_at: timestamp.nullable(),
  cancelled_at: timestamp.nullable(),
  waiting_reason: z
    .enum(WAITING_REASONS)
    .nullable()
    .describe('Why a sending campaign is not sending now, or why Mailpath paused it (quota_exceeded, render_budget: see paused_reason)'),
  waiting_until: timestamp
    .nullable()
    .describe('When it goes on by itself (the next 00:00 UTC for warmup_cap, the next month for quota_exceeded); null when it waits for someone'),
  failure_reason: z.string().nullable(),
  paused_reason: z
    .string()
    .nullable()
    .describe(
      'Why the campaign was paused by Mailpath, in words: with waiting_reason render_budget, the part and the limit its renders exceeded (its recipients ' +
        'are left pending, not skipped, and resuming renders them again); null otherwise',
    ),
  send_mode: z.enum(['live', 'test']).nullable().describe('test: started with a test key, every send simulated'),
  progress,
  created_at: timestamp,
  updated_at: timestamp,
};

export const campaign = z.object({ ...common, body_html: z.string().nullable(), body_text: z.string().nullable() });
export const campaignSummary = z.object({ ...common, has_body_html: z.boolean(), has_body_text: z.boolean() });

function presentCommon(view: CampaignView<Omit<CampaignRow, 'body_html' | 'body_text'>>) {
  const { row: r, counters: c } = view;
  const skipped = {
    unsubscribed: c.skipped_unsubscribed,
    deleted: c.skipped_deleted,
    suppressed: c.skipped_suppressed,
    md5_listed: c.skipped_md5,
    invalid: c.skipped_invalid,
    cancelled: c.skipped_cancelled,
  };
  const skippedTotal = Object.values(skipped).reduce((a, b) => a + b, 0);
  return {
    id: r.id,
    name: r.name,
    status: r.status,
    subject: r.subject,
    subject_b: r.subject_b,
    preheader_text: r.preheader_text,
    from_email: r.from_email,
    from_name: r.from_name,
    reply_to: r.reply_to,
    list_id: r.list_id,
    segment_id: r.segment_id,
    template_id: r.template_id,
    md5_list_id: r.md5_list_id,
    ab_split_pct: r.ab_split_pct,
    ab_metric: r.ab_metric,
    ab_winner: r.ab_winner,
    ab_winner_declared_at: iso(r.ab_winner_declared_at),
    send_time_optimization: r.send_time_optimization,
    utm_tagging: r.utm_tagging,
    utm_source: r.utm_source,
    utm_medium: r.utm_medium,
    utm_campaign: r.utm_campaign,
    track_opens: r.track_opens,
    track_clicks: r.track_clicks,
    scheduled_at: iso(r.scheduled_at),
    started_at: iso(r.started_at),
    finished_at: iso(r.finished_at),
    paused_at: iso(r.paused_at),
    cancelled_at: iso(r.cancelled_at),
    waiting_reason: r.waiting_reason,
    waiting_until: iso(r.waiting_until),
    failure_reason: r.failure_reason,
    paused_reason: r.paused_reason,
    send_mode: r.send_mode,
    progress: {
      targeted: c.targeted,
      skipped,
      skipped_total: skippedTotal,
      queued: c.queued,
      remaining: Math.max(0, c.targeted - skippedTotal - c.queued),
      sent: c.sent,
      delivered: c.delivered,
      deferred: c.deferred,
      failed: c.failed,
      targeting_complete: r.targeted_at !== null,
    },
    created_at: iso(r.created_at),
    updated_at: iso(r.updated_at),
  };
}

export function presentCampaign(view: CampaignView): z.input<typeof campaign> {
  return { ...presentCommon(view), body_html: view.row.body_html, body_text: view.row.body_text };
}

export function presentSummary(view: CampaignView<CampaignSummaryRow>): z.input<typeof campaignSummary> {
  return { ...presentCommon(view), has_body_html: view.row.has_body_html, has_body_text: view.row.has_body_text };
}
