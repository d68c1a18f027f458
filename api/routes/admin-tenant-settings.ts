// Super-admin tenant settings: the plan, the sandbox flag and the API rate-limit override.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import {
  changeTenantPlan,
  changeTenantSandbox,
  putTenantRateLimit,
  readTenantRateLimit,
  type RateLimitView,
  type TenantSettingsDeps,
} from '../../shared/accounts/tenants/settings.js';
import type { FanoutQueueDeps } from '../../shared/campaigns/fanout-jobs.js';
import type { ApiContext } from '../context.js';
import { defineRoute } from '../route.js';
import { idParam, iso, timestamp } from '../schemas/common.js';
import { callerOf } from './admin-tenants.js';

const TAGS = ['Super-admin: tenants'];

const settingsDeps = (ctx: ApiContext): TenantSettingsDeps & FanoutQueueDeps => ({
  sql: ctx.sql,
  clock: ctx.clock,
  boss: ctx.boss,
  config: ctx.config,
  forgetTenant: (id) => ctx.credentials.forgetTenant(id),
  forgetTenantLimits: (id) => ctx.tenantLimits.forget(id),
});

const rateLimit = z.object({
  tenant_id: z.string(),
  api_requests_per_sec: z.number().int().nullable().describe('Per-second cap over all of the tenant’s keys and sessions; null: default_per_sec applies'),
  api_requests_per_day: z.number().int().nullable().describe('Daily cap (rolling 24 h); null: none'),
  notes: z.string().nullable().describe('Why the override exists (operators’ note)'),
  default_per_sec: z.number().int().describe('The global per-second default (config/limits.yaml rate_limits.tenant_default_per_sec)'),
  updated_at: timestamp.nullable().describe('When the override was last set; null without one'),
});

const presentLimit = (v: RateLimitView) => ({ ...v, updated_at: iso(v.updated_at) });

export const adminTenantSettingsRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  const defaultPerSec = ctx.config.limits.rate_limits.tenant_default_per_sec;

  defineRoute(app, {
    method: 'PUT',
    url: '/admin/tenants/:id/plan',
    auth: 'super_admin',
    tags: TAGS,
    summary: "Change a tenant's plan",
    description:
      "Moves the tenant to another plan (its monthly send cap applies from the next send). This month's quota count is not reset: " +
      "quota_used is the same count measured against the new cap. When the new cap leaves room, the tenant's campaigns paused at the quota " +
      '(waiting_reason quota_exceeded) go back to sending at once (campaigns_resumed). ' +
      'Audited as tenant.plan_changed (nothing written when the plan is the same). ' +
      'Unknown tenant → 404; unknown plan → 422 validation_error naming plan_id.',
    params: idParam('id'),
    body: z.strictObject({ plan_id: z.string().min(1).max(64).describe('A plan id (the plans table: free, … )') }),
    errors: [404],
    response: z.object({
      tenant_id: z.string(),
      plan_id: z.string(),
      previous_plan_id: z.string(),
      monthly_send_cap: z.number().int().describe("The new plan's monthly send cap"),
      quota_used: z.number().int().describe('Sends counted this UTC month, kept across the change'),
      changed: z.boolean().describe('False when the tenant was already on that plan'),
      campaigns_resumed: z.number().int().describe('Campaigns paused at the quota that went back to sending (the new cap leaves room)'),
    }),
    handler: async ({ params, body, principal, ip }) => changeTenantPlan(settingsDeps(ctx), callerOf(principal, ip), params.id, body.plan_id),
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/admin/tenants/:id/sandbox',
    auth: 'super_admin',
    tags: TAGS,
    summary: 'Put a tenant in the sandbox or take it out',
    description:
      'While is_sandbox is true every outbound send of the tenant (API, SMTP submission, campaigns, and sends already queued) is recorded ' +
      'in the simulated-sends store (status simulated) instead of delivered; it uses no quota. Audited as tenant.sandbox_enabled / ' +
      'tenant.sandbox_disabled when it changes. Applies at once in this process, within the credential cache time in the others. Unknown → 404.',
    params: idParam('id'),
    body: z.strictObject({ is_sandbox: z.boolean().describe('true: intercept every send; false: deliver for real') }),
    errors: [404],
    response: z.object({ tenant_id: z.string(), is_sandbox: z.boolean() }),
    handler: async ({ params, body, principal, ip }) => changeTenantSandbox(settingsDeps(ctx), callerOf(principal, ip), params.id, body.is_sandbox),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/admin/tenants/:id/rate-limit',
    auth: 'super_admin',
    tags: TAGS,
    summary: "Read a tenant's API rate-limit override",
    description: 'The override (each field null when not set) plus default_per_sec, the global per-second default that applies without one. Unknown → 404.',
    params: idParam('id'),
    errors: [404],
    response: rateLimit,
    handler: async ({ params }) => presentLimit(await readTenantRateLimit(settingsDeps(ctx), params.id, defaultPerSec)),
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/admin/tenants/:id/rate-limit',
    auth: 'super_admin',
    tags: TAGS,
    summary: "Set or reset a tenant's API rate-limit override",
    description:
      'Replaces the override: a field left out or null is unset. {} resets the tenant to the global default. The caps count every API ' +
      'request and SMTP submission recipient of the tenant, over all its keys and sessions. Takes effect at once in this process and within ' +
      'the 60-second cache refresh (rate_limits.override_cache_ms) in every other. Audited as tenant.rate_limit_set / tenant.rate_limit_reset. Unknown → 404.',
    params: idParam('id'),
    body: z.strictObject({
      api_requests_per_sec: z.number().int().min(1).max(1_000_000).nullish().describe('Requests per second, 1..1000000; null: the default'),
      api_requests_per_day: z.number().int().min(1).max(1_000_000_000).nullish().describe('Requests per rolling day; null: no daily cap'),
      notes: z.string().max(1000).nullish().describe('Why (free text)'),
    }),
    errors: [404],
    response: rateLimit,
    handler: async ({ params, body, principal, ip }) =>
      presentLimit(await putTenantRateLimit(settingsDeps(ctx), callerOf(principal, ip), params.id, body, defaultPerSec)),
  });
};
