// The 30-day warm-up schedule of a tenant: generated from either of the spec's field sets, edited row by row, and dispatched one day at a time.
import type { AuditActor } from '../../operations/audit/log.js';
import { writeAudit } from '../../operations/audit/log.js';
import type { WarmupConfig } from '../../config/index.js';
import { warmupSender } from '../../campaigns/default-sender.js';
import { AppError, conflict, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import type { SendingDeps } from '../../sending/deps.js';
import { isRefused } from '../../sending/accept.js';
import { sendTransactional } from '../../sending/transactional.js';
import { requireTenant } from '../../accounts/tenants/require.js';
import { capForTier, utcDay } from './tiers.js';
import {
  claimRow,
  dispatchDomain,
  finishRow,
  mostEngagedContacts,
  patchRow,
  planOf,
  replacePlan,
  scheduleRows,
  templateIdBySlug,
  type PlanRow,
  type RowPatch,
  type ScheduleRow,
} from './schedule-queries.js';

export const SCHEDULE_DAYS = 30;
const DAY_MS = 86_400_000;

/** The spec's two field sets, as the route validated them (each field optional here; which set it is decides what is required). */
export interface GenerateInput {
  strategy?: 'standard' | 'aggressive' | 'gentle' | undefined;
  total_target_recipients: number;
  domain_id?: string | undefined;
  start_date?: string | undefined;
  ramp_strategy?: 'standard' | 'conservative' | 'aggressive' | undefined;
}

/** Share of the day's tier cap each strategy plans: gentle (formal) and conservative (narrative) are both half the cap. */
const MULTIPLIER: Record<string, number> = { standard: 1, gentle: 0.5, conservative: 0.5, aggressive: 1.5 };

/**
 * The tier a schedule day stands for, after the spec's "typical timing": days 1–7 climb tiers 0–6,
 * week 2 is tier 7, week 3 tier 8, week 4 tier 9, the last two days tier 10 (fully warm).
 */
export function tierOfDay(dayOffset: number): number {
  if (dayOffset < 7) return dayOffset;
  return Math.min(10, 7 + Math.floor((dayOffset - 7) / 7));
}

/**
 * Each day plans its strategy's share of the day's tier cap until the total is used up: days after
 * that plan 0, and a total bigger than the curve allows is planned up to the curve (the rest is
 * reported as unplanned rather than pushed over the caps).
 */
export function dailyTargets(config: Pick<WarmupConfig, 'tier_caps'>, multiplier: number, total: number): number[] {
  let left = total;
  return Array.from({ length: SCHEDULE_DAYS }, (_, d) => {
    const n = Math.min(left, Math.floor(capForTier(config, tierOfDay(d)) * multiplier));
    left -= n;
    return n;
  });
}

type Deps = Pick<SendingDeps, 'sql' | 'config' | 'clock'>;

export interface Schedule {
  plan: PlanRow | null;
  items: (ScheduleRow & { date: string | null })[];
}

function withDates(plan: PlanRow | undefined, rows: ScheduleRow[]): Schedule {
  const start = plan ? Date.parse(`${plan.start_date}T00:00:00Z`) : null;
  return { plan: plan ?? null, items: rows.map((r) => ({ ...r, date: start === null ? null : utcDay(new Date(start + r.day_offset * DAY_MS)) })) };
}

export async function getSchedule(deps: Deps, tenantId: string): Promise<Schedule> {
  await requireTenant(deps.sql, tenantId);
  return withDates(await planOf(deps.sql, tenantId), await scheduleRows(deps.sql, tenantId));
}

/** Generates (and overwrites) the tenant's plan from either field set; audited as warmup.schedule_generate. */
export async function generateSchedule(deps: Deps, tenantId: string, input: GenerateInput, actor: AuditActor): Promise<Schedule> {
  await requireTenant(deps.sql, tenantId);
  const narrative = input.ramp_strategy !== undefined || input.start_date !== undefined;
  if (input.strategy !== undefined && input.ramp_strategy !== undefined) throw validationError('ramp_strategy', 'give strategy or ramp_strategy, not both');
  if (!narrative && input.strategy === undefined)
    throw validationError('strategy', 'is required (standard, aggressive or gentle), or give the start_date / ramp_strategy field set');
  const strategy = input.strategy ?? input.ramp_strategy ?? 'standard';
  if (input.domain_id !== undefined) {
    const domain = isUuid(input.domain_id) ? await dispatchDomain(deps.sql, tenantId, input.domain_id) : undefined;
    if (!domain) throw notFound('domain');
  }
  const now = deps.clock.now();
  const startDate = input.start_date ?? utcDay(now);
  const targets = dailyTargets(deps.config.warmup, MULTIPLIER[strategy]!, input.total_target_recipients);
  await deps.sql.begin(async (tx) => {
    await replacePlan(
      tx,
      {
        tenant_id: tenantId,
        strategy,
        field_set: narrative ? 'narrative' : 'formal',
        total_target_recipients: input.total_target_recipients,
        start_date: startDate,
        domain_id: input.domain_id ?? null,
        at: now,
      },
      targets,
    );
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'warmup.schedule_generate',
      resourceType: 'warmup_schedule',
      resourceId: tenantId,
      metadata: {
        strategy,
        field_set: narrative ? 'narrative' : 'formal',
        total_target_recipients: input.total_target_recipients,
        start_date: startDate,
        domain_id: input.domain_id ?? null,
      },
      at: now,
    });
  });
  return getSchedule(deps, tenantId);
}

/** Changes the fields present on one row; audited with the fields changed. */
export async function patchScheduleRow(
  deps: Deps,
  tenantId: string,
  dayOffset: number,
  patch: RowPatch,
  actor: AuditActor,
): Promise<ScheduleRow & { date: string | null }> {
  await requireTenant(deps.sql, tenantId);
  const now = deps.clock.now();
  const row = await deps.sql.begin(async (tx) => {
    const updated = await patchRow(tx, tenantId, dayOffset, patch, now);
    if (!updated) return undefined;
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'warmup.schedule_patch',
      resourceType: 'warmup_schedule',
      resourceId: `${tenantId}:${dayOffset}`,
      metadata: { day_offset: dayOffset, changed: Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) },
      at: now,
    });
    return updated;
  });
  if (!row) throw notFound('warm-up schedule row (generate a schedule first)');
  return withDates(await planOf(deps.sql, tenantId), [row]).items[0]!;
}

export interface DispatchAnswer {
  day_offset: number;
  send_status: string;
  triggered: boolean;
  result: Record<string, unknown> | null;
}

/** A dispatch left `dispatching` this long ago is taken to have crashed and may be run again. */
const STALE_DISPATCH_MS = 3_600_000;

/**
 * Dispatches today's row (day_offset = UTC days since the plan's start_date): its
 * daily_target_recipients most engaged active contacts each get the row's template from the plan's
 * domain (or the tenant's oldest verified one), through the normal send path, so the warm-up gate,
 * suppression and quota apply as to any send. A sent row is terminal: dispatching it again does
 * nothing (triggered false). Each recipient's send carries an Idempotency-Key of (plan, day, contact),
 * so a dispatch re-run after a failure never mails anyone twice.
 */
export async function dispatchToday(deps: SendingDeps, tenantId: string, actor: AuditActor): Promise<DispatchAnswer> {
  await requireTenant(deps.sql, tenantId);
  const plan = await planOf(deps.sql, tenantId);
  if (!plan) throw notFound('warm-up schedule (generate one first)');
  const now = deps.clock.now();
  const dayOffset = Math.floor((Date.parse(`${utcDay(now)}T00:00:00Z`) - Date.parse(`${plan.start_date}T00:00:00Z`)) / DAY_MS);
  if (dayOffset < 0 || dayOffset >= SCHEDULE_DAYS)
    throw conflict(`today is day ${dayOffset} of the schedule starting ${plan.start_date}: no row (0..29) to dispatch`);
  const claimed = await claimRow(deps.sql, tenantId, dayOffset, now, new Date(now.getTime() - STALE_DISPATCH_MS));
  if (!claimed) {
    const current = (await scheduleRows(deps.sql, tenantId)).find((r) => r.day_offset === dayOffset)!;
    return { day_offset: dayOffset, send_status: current.send_status, triggered: false, result: current.dispatch_result };
  }
  let result: Record<string, unknown>;
  let status: 'sent' | 'failed' = 'sent';
  try {
    result = await sendDay(deps, tenantId, plan, claimed, now);
  } catch (err) {
    status = 'failed';
    result = { error: err instanceof AppError ? `${err.slug}: ${err.message}` : (err as Error).message };
  }
  const row = await finishRow(deps.sql, tenantId, dayOffset, status, result, deps.clock.now());
  await writeAudit(deps.sql, {
    tenantId,
    actor,
    action: 'warmup.schedule_dispatch',
    resourceType: 'warmup_schedule',
    resourceId: `${tenantId}:${dayOffset}`,
    metadata: { day_offset: dayOffset, send_status: row.send_status, ...result },
    at: now,
  });
  return { day_offset: dayOffset, send_status: row.send_status, triggered: true, result };
}

async function sendDay(deps: SendingDeps, tenantId: string, plan: PlanRow, row: ScheduleRow, now: Date): Promise<Record<string, unknown>> {
  if (!row.template_slug) throw validationError('template_slug', 'the row names no template (PATCH the row first)');
  const templateId = await templateIdBySlug(deps.sql, tenantId, row.template_slug);
  if (!templateId) throw validationError('template_slug', `no template with id or name ${row.template_slug}`);
  const domain = await dispatchDomain(deps.sql, tenantId, plan.domain_id);
  if (!domain) throw new AppError('no_verified_domain', 'the tenant has no verified sending domain');
  const tenant = await requireTenant(deps.sql, tenantId);
  const contacts = await mostEngagedContacts(deps.sql, tenantId, row.daily_target_recipients, now);
  const counts = { recipients: contacts.length, accepted: 0, deferred: 0, dropped: 0, refused: 0, failed: 0 };
  const caller = { tenant: { id: tenant.id, status: tenant.status, is_sandbox: tenant.is_sandbox }, mode: 'live' as const, apiKeyId: null };
  const sender = await warmupSender(deps.sql, tenantId, domain.name, deps.config.warmup.schedule_from_local_part);
  const from = sender.from_email;
  const named = { ...(sender.from_name ? { from_name: sender.from_name } : {}), ...(sender.reply_to ? { reply_to: sender.reply_to } : {}) };
  for (const c of contacts) {
    try {
      const out = await sendTransactional(
        deps,
        caller,
        { to: c.email, from_email: from, ...named, template_id: templateId, variables: { first_name: c.first_name, last_name: c.last_name } },
        `warmup-schedule:${plan.generated_at.toISOString()}:${row.day_offset}:${c.id}`,
      );
      if (isRefused(out)) counts.refused++;
      else if (out.answer.status === 'deferred') counts.deferred++;
      else if (out.answer.status === 'dropped') counts.dropped++;
      else counts.accepted++;
    } catch {
      counts.failed++;
    }
  }
  return { ...counts, domain: domain.name, template_id: templateId, from_email: from };
}
