// The super-admin's tenant settings: plan, sandbox flag and API rate-limit override; each change is audited and applies at once in this process.
import { writeAudit } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import type { Sql } from '../../db/connection.js';
import { notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { putTenantLimitOverride, type OverrideInput } from '../../limits/rate-limits/queries.js';
import { findTenantLimitOverride, type TenantLimitOverride } from '../../limits/rate-limits/tenant-limits.js';
import { utcMonth } from '../../deliverability/warmup/tiers.js';
import { lockTenant } from './queries.js';
import { requireTenant } from './require.js';
import type { TenantAdminCaller } from './admin.js';
import type { FanoutQueueDeps } from '../../campaigns/fanout-jobs.js';
import { wakeQuotaPaused } from '../../campaigns/wake.js';
import { monthlyUsage, planExists, setTenantPlan, setTenantSandbox } from './settings-queries.js';

export interface TenantSettingsDeps {
  sql: Sql;
  clock: Clock;
  /** Drops this process's cached credentials of the tenant (they carry the plan and the sandbox flag). */
  forgetTenant?: (tenantId: string) => void;
  /** Drops this process's cached rate limits of the tenant; other processes re-read within override_cache_ms. */
  forgetTenantLimits?: (tenantId: string) => void;
}

export interface PlanChange {
  tenant_id: string;
  plan_id: string;
  previous_plan_id: string;
  monthly_send_cap: number;
  /** This month's sends so far: the change keeps them (the new cap applies to the same count). */
  quota_used: number;
  changed: boolean;
  /** Campaigns paused at the quota that went back to sending because the new cap leaves room. */
  campaigns_resumed: number;
}

/**
 * Moves a tenant to another plan. Unknown tenant → 404; unknown plan → 422 naming plan_id. The month's quota count is
 * kept. When the cap leaves room, the tenant's campaigns paused at the quota go on in the same transaction.
 */
export async function changeTenantPlan(
  deps: TenantSettingsDeps & FanoutQueueDeps,
  caller: TenantAdminCaller,
  tenantId: string,
  planId: string,
): Promise<PlanChange> {
  if (!isUuid(tenantId)) throw notFound('tenant');
  const at = deps.clock.now();
  const result = await deps.sql.begin(async (tx) => {
    const row = await lockTenant(tx, tenantId);
    if (!row) throw notFound('tenant');
    const plan = await planExists(tx, planId);
    if (!plan) throw validationError('plan_id', `unknown plan '${planId}'`);
    const changed = row.plan_id !== planId;
    if (changed) await setTenantPlan(tx, tenantId, planId, at);
    const used = await monthlyUsage(tx, tenantId, utcMonth(at));
    // Without this they would wait for the month's reset (or POST /resume) although the new cap has room now.
    const resumed = used < plan.monthly_send_cap ? await wakeQuotaPaused(deps, tx, { tenantId }, at) : [];
    if (changed) {
      await writeAudit(tx, {
        tenantId,
        actor: caller.actor,
        action: 'tenant.plan_changed',
        resourceType: 'tenant',
        resourceId: tenantId,
        metadata: { previous_plan_id: row.plan_id, plan_id: planId, ...(resumed.length > 0 ? { resumed_campaign_ids: resumed } : {}) },
        at,
      });
    }
    const cap = plan.monthly_send_cap;
    return {
      tenant_id: tenantId,
      plan_id: planId,
      previous_plan_id: row.plan_id,
      monthly_send_cap: cap,
      quota_used: used,
      changed,
      campaigns_resumed: resumed.length,
    };
  });
  if (result.changed) deps.forgetTenant?.(tenantId);
  return result;
}

/**
 * Puts a tenant in the sandbox or takes it out. In the sandbox every outbound send (API, submission, campaigns,
 * and sends already queued when it was flipped) is recorded in the simulated-sends store instead of delivered.
 * Unknown → 404. Audited when it changes.
 */
export async function changeTenantSandbox(
  deps: TenantSettingsDeps,
  caller: TenantAdminCaller,
  tenantId: string,
  isSandbox: boolean,
): Promise<{ tenant_id: string; is_sandbox: boolean }> {
  if (!isUuid(tenantId)) throw notFound('tenant');
  const at = deps.clock.now();
  const changed = await deps.sql.begin(async (tx) => {
    const row = await lockTenant(tx, tenantId);
    if (!row) throw notFound('tenant');
    if (row.is_sandbox === isSandbox) return false;
    await setTenantSandbox(tx, tenantId, isSandbox, at);
    await writeAudit(tx, {
      tenantId,
      actor: caller.actor,
      action: isSandbox ? 'tenant.sandbox_enabled' : 'tenant.sandbox_disabled',
      resourceType: 'tenant',
      resourceId: tenantId,
      metadata: { is_sandbox: isSandbox },
      at,
    });
    return true;
  });
  if (changed) deps.forgetTenant?.(tenantId);
  return { tenant_id: tenantId, is_sandbox: isSandbox };
}

export interface RateLimitView extends OverrideInput {
  tenant_id: string;
  default_per_sec: number;
  updated_at: Date | null;
}

const view = (tenantId: string, row: TenantLimitOverride | undefined, defaultPerSec: number): RateLimitView => ({
  tenant_id: tenantId,
  api_requests_per_sec: row?.api_requests_per_sec ?? null,
  api_requests_per_day: row?.api_requests_per_day ?? null,
  notes: row?.notes ?? null,
  default_per_sec: defaultPerSec,
  updated_at: row?.updated_at ?? null,
});

export async function readTenantRateLimit(deps: TenantSettingsDeps, tenantId: string, defaultPerSec: number): Promise<RateLimitView> {
  await requireTenant(deps.sql, tenantId);
  return view(tenantId, await findTenantLimitOverride(deps.sql, tenantId), defaultPerSec);
}

/**
 * Replaces the override (absent fields become null; all null, as `{}`, removes it: the global default applies).
 * Audited with the before and after values. Applies at once here, within override_cache_ms (≤ 60 s) elsewhere.
 */
export async function putTenantRateLimit(
  deps: TenantSettingsDeps,
  caller: TenantAdminCaller,
  tenantId: string,
  input: Partial<OverrideInput>,
  defaultPerSec: number,
): Promise<RateLimitView> {
  if (!isUuid(tenantId)) throw notFound('tenant');
  const at = deps.clock.now();
  const next: OverrideInput = {
    api_requests_per_sec: input.api_requests_per_sec ?? null,
    api_requests_per_day: input.api_requests_per_day ?? null,
    notes: input.notes?.trim() || null,
  };
  const row = await deps.sql.begin(async (tx) => {
    if (!(await lockTenant(tx, tenantId))) throw notFound('tenant');
    const before = await findTenantLimitOverride(tx, tenantId);
    const after = await putTenantLimitOverride(tx, tenantId, next, at);
    await writeAudit(tx, {
      tenantId,
      actor: caller.actor,
      action: after ? 'tenant.rate_limit_set' : 'tenant.rate_limit_reset',
      resourceType: 'tenant',
      resourceId: tenantId,
      metadata: {
        before: before ? { api_requests_per_sec: before.api_requests_per_sec, api_requests_per_day: before.api_requests_per_day, notes: before.notes } : null,
        after: after ? next : null,
      },
      at,
    });
    return after;
  });
  deps.forgetTenantLimits?.(tenantId);
  return view(tenantId, row, defaultPerSec);
}
