// Super-admin warm-up schedule of a tenant: the 30 rows, generation from either of the spec's field sets, row edits and today's dispatch.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { dispatchToday, generateSchedule, getSchedule, patchScheduleRow, type Schedule } from '../../shared/deliverability/warmup/schedule.js';
import { defineRoute } from '../route.js';
import { idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: warm-up'];

const SEND_STATUS = ['pending', 'dispatching', 'sent', 'skipped', 'failed'] as const;

const row = z.object({
  day_offset: z.number().int().describe('0..29'),
  date: z.string().nullable().describe('start_date + day_offset (UTC)'),
  daily_target_recipients: z.number().int(),
  template_slug: z.string().nullable().describe('The template sent on dispatch: its id or its name'),
  notes: z.string().nullable(),
  send_status: z.enum(SEND_STATUS).describe('sent is terminal for dispatch; dispatching while a dispatch runs; failed may be dispatched again'),
  dispatched_at: timestamp.nullable(),
  dispatch_result: z.record(z.string(), z.unknown()).nullable().describe('recipients, accepted, deferred, dropped, refused, failed, or the error'),
  updated_at: timestamp,
});

const plan = z.object({
  strategy: z.string().describe('standard, aggressive, gentle (formal) or standard, conservative, aggressive (narrative)'),
  field_set: z.enum(['formal', 'narrative']),
  total_target_recipients: z.number().int(),
  start_date: z.string(),
  domain_id: z.string().nullable(),
  generated_at: timestamp,
});

const scheduleResponse = z.object({ tenant_id: z.string(), plan: plan.nullable(), items: z.array(row) });

const presentRow = (r: Schedule['items'][number]): z.input<typeof row> => ({
  day_offset: r.day_offset,
  date: r.date,
  daily_target_recipients: r.daily_target_recipients,
  template_slug: r.template_slug,
  notes: r.notes,
  send_status: r.send_status as (typeof SEND_STATUS)[number],
  dispatched_at: iso(r.dispatched_at),
  dispatch_result: r.dispatch_result,
  updated_at: r.updated_at.toISOString(),
});

const present = (tenantId: string, s: Schedule): z.input<typeof scheduleResponse> => ({
  tenant_id: tenantId,
  plan: s.plan ? { ...s.plan, generated_at: s.plan.generated_at.toISOString() } : null,
  items: s.items.map(presentRow),
});

const generateBody = z
  .object({
    strategy: z
      .enum(['standard', 'aggressive', 'gentle'])
      .optional()
      .describe('Formal field set (required there): standard = the tier caps, gentle = half, aggressive = 1.5 times'),
    total_target_recipients: z.number().int().min(0).max(10_000_000).describe('Both field sets; at most 10,000,000'),
    domain_id: z.string().max(64).optional().describe('Formal field set: the verified domain dispatches send from (default: the oldest verified one)'),
    start_date: z.iso.date().optional().describe('Narrative field set: the date of day_offset 0 (default: today, UTC)'),
    ramp_strategy: z
      .enum(['standard', 'conservative', 'aggressive'])
      .optional()
      .describe('Narrative field set: conservative = half the daily cap, aggressive = 1.5 times'),
  })
  .strict();

export const adminWarmupScheduleRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/warmup-schedule',
    auth: 'super_admin',
    tags: TAGS,
    summary: "A tenant's warm-up schedule",
    description: 'The plan and its 30 rows (day_offset 0..29); items is empty before a plan is generated.',
    params: idParam('id'),
    errors: [404],
    response: scheduleResponse,
    handler: async ({ params }) => present(params.id, await getSchedule(ctx, params.id)),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/tenants/:id/warmup-schedule/generate',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Generate the warm-up schedule',
    description:
      "Overwrites any plan with 30 new rows. Accepts both of the spec's field sets: formal {strategy (standard | aggressive | gentle), " +
      'total_target_recipients, ' +
      'domain_id?} or narrative {start_date, total_target_recipients, ramp_strategy (standard | conservative | aggressive)}; strategy and ramp_strategy ' +
      "together are 422. Day d plans the strategy's share of the tier cap of its typical day (days 1-7: tiers 0-6, weeks 2-4: tiers 7-9, then 10) " +
      'until total_target_recipients is used up; later days plan 0. Audited as warmup.schedule_generate.',
    params: idParam('id'),
    body: generateBody,
    errors: [404, 422],
    response: scheduleResponse,
    handler: async ({ params, body, principal, ip }) => present(params.id, await generateSchedule(ctx, params.id, body, actorOf(principal, ip))),
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/admin/tenants/:id/warmup-schedule/:day_offset',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Edit one schedule row',
    description:
      'Changes only the fields present (daily_target_recipients, template_slug, notes, send_status); day_offset outside 0..29 is 422. Audited as ' +
      'warmup.schedule_patch.',
    params: z.object({ id: z.string().max(64), day_offset: z.coerce.number().int().min(0).max(29) }),
    body: z
      .object({
        daily_target_recipients: z.number().int().min(0).max(10_000_000).optional(),
        template_slug: z.string().trim().min(1).max(200).nullable().optional(),
        notes: z.string().max(2000).nullable().optional(),
        send_status: z.enum(['pending', 'sent', 'skipped', 'failed']).optional(),
      })
      .strict(),
    errors: [404, 422],
    response: row,
    handler: async ({ params, body, principal, ip }) => presentRow(await patchScheduleRow(ctx, params.id, params.day_offset, body, actorOf(principal, ip))),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/admin/tenants/:id/warmup-schedule/dispatch-now',
    auth: 'super_admin',
    tags: TAGS,
    summary: "Dispatch today's schedule row",
    description:
      'Dispatches the row of today (day_offset = UTC days since start_date): its daily_target_recipients most engaged active contacts (most opens ' +
      "and clicks in 90 days) each get the row's template from the plan's domain, through the normal send path (warm-up gate, suppression, quota). " +
      "Idempotent: a sent row is terminal and dispatching it again does nothing (triggered false); each recipient's send has an Idempotency-Key, " +
      'so re-running a failed dispatch mails nobody twice. 404 without a plan, 409 when today is outside days 0..29. Audited as warmup.schedule_dispatch.',
    params: idParam('id'),
    errors: [404, 409],
    response: z.object({
      day_offset: z.number().int(),
      send_status: z.enum(SEND_STATUS),
      triggered: z.boolean(),
      result: z.record(z.string(), z.unknown()).nullable(),
    }),
    handler: async ({ params, principal, ip }) => {
      const r = await dispatchToday(ctx, params.id, actorOf(principal, ip));
      return { ...r, send_status: r.send_status as (typeof SEND_STATUS)[number] };
    },
  });
};
