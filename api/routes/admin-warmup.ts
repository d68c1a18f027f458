// Super-admin warm-up: the auto-ramp's run-now, a tenant's domains with their tiers and moves, overrides (advance, hold, demote, pause, resume; advance and
// demote to a given tier), per-ESP sub-caps and the reconciliation report.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { writeAudit } from '../../shared/operations/audit/log.js';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { AppError } from '../../shared/kernel/errors.js';
import { MAILBOX_PROVIDERS } from '../../shared/deliverability/mailbox-providers.js';
import { requireTenant } from '../../shared/accounts/tenants/require.js';
import { applyOverride, type OverrideAction } from '../../shared/deliverability/warmup/overrides.js';
import { setTenantEspCap } from '../../shared/deliverability/warmup/esp-caps.js';
import type { MoveRow } from '../../shared/deliverability/warmup/ramp-queries.js';
import { tenantEspCaps, tenantWarmup } from '../../shared/deliverability/warmup/tenant-warmup.js';
import { reconciliation } from '../../shared/deliverability/warmup/reconciliation.js';
import { capForTier } from '../../shared/deliverability/warmup/tiers.js';
import { findWorker, runWorker } from '../../shared/operations/workers/catalog.js';
import { defineRoute } from '../route.js';
import { idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Super-admin: warm-up'];

const move = z.object({
  id: z.string(),
  domain_id: z.string(),
  source: z.enum(['auto', 'override']).describe('auto: the daily ramp; override: a super-admin'),
  rates_day: z.string().nullable().describe('auto: the UTC day whose outcomes were judged'),
  action: z.enum(['promote', 'hold', 'demote', 'pause', 'resume', 'reset', 'advance', 'freeze']),
  from_tier: z.number().int(),
  to_tier: z.number().int(),
  reason: z.string(),
  rates: z.record(z.string(), z.unknown()).nullable().describe('auto: sent, delivered, bounced, complained and the three rates, with the class'),
  actor_id: z.string().nullable(),
  created_at: timestamp,
});

const presentMove = (m: MoveRow): z.input<typeof move> => ({
  id: m.id,
  domain_id: m.domain_id,
  source: m.source,
  rates_day: m.rates_day,
  action: m.action as z.infer<typeof move>['action'],
  from_tier: m.from_tier,
  to_tier: m.to_tier,
  reason: m.reason,
  rates: m.rates,
  actor_id: m.actor_id,
  created_at: m.created_at.toISOString(),
});

const domainState = z.object({
  domain_id: z.string(),
  name: z.string(),
  verified: z.boolean(),
  tier: z.number().int(),
  daily_cap: z.number().int(),
  tier_changed_at: timestamp,
  last_send_at: timestamp.nullable(),
  paused: z.boolean(),
  paused_at: timestamp.nullable(),
  paused_reason: z.string().nullable(),
  held_until: timestamp.nullable().describe('The tier is frozen until then (no ramp promotion or demotion)'),
});

const overrideBody = z.object({ reason: z.string().trim().min(1).max(500).optional().describe('Recorded on the move and the audit row') }).strict();
const holdBody = z
  .object({
    days: z.number().int().min(0).max(90).describe('Freeze the tier for this many days; 0 lifts a freeze'),
    reason: z.string().trim().min(1).max(500).optional(),
  })
  .strict();

/** advance and demote: one step, or straight to `tier` (an extension of the spec's overrides: an operator sets the tier). */
const tierBody = (top: number) =>
  z
    .object({
      reason: z.string().trim().min(1).max(500).optional().describe('Recorded on the move and the audit row'),
      tier: z.number().int().min(0).max(top).optional().describe(`Move straight to this tier (0..${top}) instead of one step`),
    })
    .strict();

const WAKES = "The tenant's campaigns waiting on the warm-up cap (waiting_reason warmup_cap) are queued to go on at once (campaigns_woken).";
const TIER_NOTE = 'With `tier` (0..top) the domain moves straight to that tier; a tier out of range is 422 validation_error naming tier.';

const OVERRIDES: { action: OverrideAction; summary: string; description: string }[] = [
  {
    action: 'advance',
    summary: 'Advance a domain one tier, or to a tier',
    description: `Raises the tier by one now (409 at the top tier). ${TIER_NOTE} A tier not above the current one is 409. ${WAKES} Audited as warmup.advance.`,
  },
  {
    action: 'demote',
    summary: 'Demote a domain one tier, or to a tier',
    description: `Lowers the tier by one now (409 at tier 0). ${TIER_NOTE} A tier not below the current one is 409. Audited as warmup.demote.`,
  },
  {
    action: 'pause',
    summary: 'Pause a domain',
    description:
      'Defers every send of the domain (to 00:00 UTC, again each day) until resumed; the ramp leaves its tier alone meanwhile. 409 when already paused. ' +
      'Audited as warmup.pause.',
  },
  {
    action: 'resume',
    summary: 'Resume a paused domain',
    description:
      "Ends a pause (the auto-ramp's or an operator's): sends flow at the current tier again, deferred ones at their next wake-up. " +
      `409 when not paused. ${WAKES} Audited as warmup.resume.`,
  },
];

export const adminWarmupRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;

  defineRoute(app, {
    method: 'POST',
    url: '/admin/warmup/auto-ramp/run-now',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Run the warm-up auto-ramp now',
    description:
      'Applies the daily ramp to every verified domain at once, outside the 02:00 UTC schedule, judging the previous UTC day; a domain already judged ' +
      'for that day is left as it is (idempotent per tenant, domain and day). Recorded as a tick of the warmup-auto-ramp worker and audited as ' +
      'warmup.auto_ramp_run_now. ' +
      '502 worker_failed when the run fails.',
    errors: [502],
    response: z.object({ elapsed_ms: z.number().int(), triggered: z.boolean(), result: z.record(z.string(), z.unknown()).nullable() }),
    handler: async ({ principal, ip }) => {
      const run = await runWorker(ctx, findWorker('warmup-auto-ramp')!);
      await writeAudit(ctx.sql, {
        tenantId: null,
        actor: actorOf(principal, ip),
        action: 'warmup.auto_ramp_run_now',
        resourceType: 'worker',
        resourceId: 'warmup-auto-ramp',
        metadata: { outcome: run.outcome, elapsed_ms: run.elapsed_ms, result: run.result, error: run.error },
        at: ctx.clock.now(),
      });
      if (run.outcome === 'error') throw new AppError('worker_failed', `warmup-auto-ramp failed: ${run.error}`);
      return { elapsed_ms: run.elapsed_ms, triggered: run.triggered, result: run.result };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/warmup',
    auth: 'super_admin',
    tags: TAGS,
    summary: "A tenant's warm-up",
    description:
      "Each of the tenant's domains with its tier, daily cap, pause and freeze, and the tenant's last 100 moves (ramp verdicts with the rates they " +
      'used, and overrides), newest first.',
    params: idParam('id'),
    errors: [404],
    response: z.object({ tenant_id: z.string(), domains: z.array(domainState), moves: z.array(move) }),
    handler: async ({ params }) => {
      const { domains, moves } = await tenantWarmup(ctx, params.id);
      return {
        tenant_id: params.id,
        domains: domains.map((d) => ({
          domain_id: d.domain_id,
          name: d.name,
          verified: d.verified,
          tier: d.tier,
          daily_cap: capForTier(ctx.config.warmup, d.tier),
          tier_changed_at: d.tier_changed_at.toISOString(),
          last_send_at: iso(d.last_send_at),
          paused: d.paused_at !== null,
          paused_at: iso(d.paused_at),
          paused_reason: d.paused_reason,
          held_until: iso(d.held_until),
        })),
        moves: moves.map(presentMove),
      };
    },
  });

  const overrideResponse = z.object({
    domain_id: z.string(),
    tier: z.number().int(),
    daily_cap: z.number().int(),
    paused: z.boolean(),
    held_until: timestamp.nullable(),
    move,
    campaigns_woken: z.number().int().describe('Campaigns waiting on the warm-up cap queued to go on now (after a rise or a resume)'),
  });
  const top = ctx.config.warmup.tier_caps.length - 1;
  const domainParams = z.object({ id: z.string().max(64).describe('Tenant id'), domain_id: z.string().max(64).describe('Sending domain id') });

  for (const o of [
    ...OVERRIDES,
    {
      action: 'hold' as const,
      summary: "Hold (freeze) a domain's tier",
      description:
        'Freezes the tier for `days` days: the auto-ramp neither promotes nor demotes it meanwhile (it may still pause it on bad bounces). days 0 ' +
        'lifts the freeze. Audited as warmup.hold.',
    },
  ]) {
    defineRoute(app, {
      method: 'POST',
      url: `/admin/tenants/:id/warmup/domains/:domain_id/${o.action}`,
      auth: 'super_admin',
      tags: TAGS,
      summary: o.summary,
      description: `${o.description} The move is recorded with the operator and reason. 404 for a tenant or domain not found (or a domain of another tenant).`,
      params: domainParams,
      body: o.action === 'hold' ? holdBody : o.action === 'advance' || o.action === 'demote' ? tierBody(top) : overrideBody,
      errors: [404, 409, 422],
      response: overrideResponse,
      handler: async ({ params, body, principal, ip }) => {
        await requireTenant(ctx.sql, params.id);
        const b = body as { reason?: string; days?: number; tier?: number };
        const actor = actorOf(principal, ip);
        const request = { tenantId: params.id, domainId: params.domain_id, action: o.action, days: b.days, tier: b.tier, reason: b.reason, actor };
        const r = await applyOverride(ctx, request);
        return {
          domain_id: r.warmup.domain_id,
          tier: r.warmup.tier,
          daily_cap: capForTier(ctx.config.warmup, r.warmup.tier),
          paused: r.warmup.paused_at !== null,
          held_until: iso(r.warmup.held_until),
          move: presentMove(r.move),
          campaigns_woken: r.woken.length,
        };
      },
    });
  }

  const espCap = z.object({ provider: z.enum(MAILBOX_PROVIDERS), daily_limit: z.number().int() });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/warmup/esp-caps',
    auth: 'super_admin',
    tags: TAGS,
    summary: "A tenant's per-ESP sub-caps",
    description:
      'The per-(tenant, mailbox provider) daily sub-caps seeded from config/warmup.yaml (by the auto-ramp) or set by a super-admin. A provider without ' +
      'a row has no sub-cap.',
    params: idParam('id'),
    errors: [404],
    response: z.object({
      tenant_id: z.string(),
      enforce: z.boolean().describe('WARMUP_PER_ESP_ENFORCE: over-cap sends are deferred, not only counted'),
      items: z.array(espCap),
    }),
    handler: async ({ params }) => {
      const items = (await tenantEspCaps(ctx, params.id)).map((c) => ({
        provider: c.provider as z.infer<typeof espCap>['provider'],
        daily_limit: c.daily_limit,
      }));
      return { tenant_id: params.id, enforce: ctx.config.warmup.per_esp_enforce, items };
    },
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/admin/tenants/:id/warmup/esp-caps/:provider',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Set or remove a per-ESP sub-cap',
    description:
      "Sets the tenant's daily sub-cap for one provider, or removes the row with daily_limit null (no sub-cap). The auto-ramp's seeding never overwrites " +
      'a row. Audited as warmup.esp_cap_set.',
    params: z.object({ id: z.string().max(64), provider: z.enum(MAILBOX_PROVIDERS) }),
    body: z.object({ daily_limit: z.number().int().min(0).max(10_000_000).nullable() }).strict(),
    errors: [404, 422],
    response: z.object({ tenant_id: z.string(), provider: z.enum(MAILBOX_PROVIDERS), daily_limit: z.number().int().nullable() }),
    handler: async ({ params, body, principal, ip }) => {
      await requireTenant(ctx.sql, params.id);
      await setTenantEspCap(ctx, actorOf(principal, ip), { tenantId: params.id, provider: params.provider, dailyLimit: body.daily_limit });
      return { tenant_id: params.id, provider: params.provider, daily_limit: body.daily_limit };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/warmup/reconciliation',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Per-ESP reconciliation',
    description:
      "Per (verified sending domain, mailbox provider): per_domain_limit (the tier cap), per_esp_limit (the tenant's sub-cap, null when no row is " +
      'seeded), effective_cap = the minimum of the two, sent_24h (live sends in the last 24 hours), would_have_throttled_count (sends over the sub-cap ' +
      'in the current UTC day; deferred_count of them were deferred because WARMUP_PER_ESP_ENFORCE is on). Providers come from the recipient domain ' +
      '(gmail, outlook, yahoo, aol, icloud, proton, fastmail, other); a provider appears when it has a sub-cap or traffic.',
    params: idParam('id'),
    errors: [404],
    response: z.object({
      tenant_id: z.string(),
      enforce: z.boolean(),
      items: z.array(
        z.object({
          domain_id: z.string(),
          domain: z.string(),
          provider: z.enum(MAILBOX_PROVIDERS),
          tier: z.number().int(),
          per_domain_limit: z.number().int(),
          per_esp_limit: z.number().int().nullable(),
          effective_cap: z.number().int(),
          sent_24h: z.number().int(),
          would_have_throttled_count: z.number().int(),
          deferred_count: z.number().int(),
        }),
      ),
    }),
    handler: async ({ params }) => {
      await requireTenant(ctx.sql, params.id);
      const items = await reconciliation(ctx.sql, ctx.config.warmup, params.id, ctx.clock.now());
      return {
        tenant_id: params.id,
        enforce: ctx.config.warmup.per_esp_enforce,
        items: items.map((i) => ({ ...i, provider: i.provider as (typeof MAILBOX_PROVIDERS)[number] })),
      };
    },
  });
};
