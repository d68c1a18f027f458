// What sending a campaign will do: how many of its recipients today's warm-up allowance and the month's quota let go today, and on which UTC days the rest
// goes if the tier holds.
import type { Clock } from '../kernel/clock.js';
import type { WarmupConfig } from '../config/index.js';
import type { Sql } from '../db/connection.js';
import type { TenantQueries } from '../db/deadline.js';
import { countMembersByStatus } from '../audiences/lists/member-queries.js';
import { monthlyUsage } from '../limits/quota/usage.js';
import { selectDefinition, requireSegment } from '../audiences/segments/service.js';
import type { SendLookups } from '../sending/lookups.js';
import { effectiveTier } from '../deliverability/warmup/gate.js';
import { dailyCount, findWarmup } from '../deliverability/warmup/queries.js';
import { capForTier, nextUtcMidnight, nextUtcMonth, utcDay, utcMonth } from '../deliverability/warmup/tiers.js';
import { campaignSender } from './default-sender.js';
import type { CampaignRow } from './queries.js';
import { campaignCounters } from './recipient-queries.js';
import { requireCampaign } from './service.js';

/** Days walked at most (ten years); a campaign that needs longer has no completion day. */
const HORIZON_DAYS = 3660;
/** Days listed in the answer at most (the first month of sending days). */
export const DAYS_LISTED = 31;

export type ForecastLimit = 'warmup' | 'domain_paused' | 'quota';

/** The counters that bound a live send today, as they stand. */
export interface Allowances {
  at: Date;
  remaining: number;
  dailyCap: number;
  sentToday: number;
  domainPaused: boolean;
  quotaCap: number;
  quotaUsed: number;
}

export interface DayPlan {
  today: number;
  limitedBy: ForecastLimit | null;
  days: { date: string; sends: number }[];
  restStartsAt: Date | null;
  completesOn: string | null;
}

/**
 * Walks the UTC days from today: each day sends the least of what remains, the day's warm-up allowance (the cap of
 * the current tier, less today's sends so far on the first day) and what is left of that month's quota. Assumes
 * the tier holds and nothing else sends from the domain or the tenant: the auto-ramp may promote the domain after
 * healthy days, and transactional mail takes from the same counters.
 */
export function planDays(a: Allowances): DayPlan {
  const days: { date: string; sends: number }[] = [];
  let remaining = a.remaining;
  let day = a.at;
  let month = utcMonth(a.at);
  let quotaLeft = Math.max(0, a.quotaCap - a.quotaUsed);
  let warmupLeft = a.domainPaused ? 0 : Math.max(0, a.dailyCap - a.sentToday);
  let today = 0;
  let limitedBy: ForecastLimit | null = null;
  let completesOn: string | null = remaining === 0 ? utcDay(a.at) : null;
  for (let i = 0; i < HORIZON_DAYS && remaining > 0; i++) {
    const sends = Math.min(remaining, warmupLeft, quotaLeft);
    if (i === 0) {
      today = sends;
      if (sends < remaining) limitedBy = quotaLeft < warmupLeft ? 'quota' : a.domainPaused ? 'domain_paused' : 'warmup';
    }
    remaining -= sends;
    quotaLeft -= sends;
    if (sends > 0 && days.length < DAYS_LISTED) days.push({ date: utcDay(day), sends });
    if (remaining === 0) completesOn = utcDay(day);
    // A paused domain sends nothing until a super-admin resumes it: no day to promise.
    if (a.domainPaused) break;
    day = nextUtcMidnight(day);
    if (utcMonth(day) !== month) {
      month = utcMonth(day);
      quotaLeft = a.quotaCap;
    }
    warmupLeft = a.dailyCap;
  }
  const restDay = days.find((d) => d.date !== utcDay(a.at));
  const restStartsAt = today < a.remaining && restDay ? new Date(`${restDay.date}T00:00:00Z`) : null;
  return { today, limitedBy, days, restStartsAt, completesOn };
}

export interface SendForecast {
  mode: 'live' | 'test';
  recipients: number;
  remaining: number;
  today: number;
  limited_by: ForecastLimit | null;
  warmup: { domain: string; tier: number; daily_cap: number; sent_today: number; paused: boolean } | null;
  quota: { monthly_cap: number; used: number; resets_at: string };
  days: { date: string; sends: number }[];
  rest_starts_at: string | null;
  completes_on: string | null;
}

export interface ForecastDeps {
  sql: Sql;
  clock: Clock;
  queries: TenantQueries;
  lookups: Pick<SendLookups, 'tenantDomains'>;
  config: { warmup: Pick<WarmupConfig, 'tier_caps' | 'reset_after_idle_days' | 'initial_tier'> };
}

/** How many contacts the campaign's target holds now: active list members, or the segment's matches (a tenant-shaped query). */
async function audienceSize(deps: ForecastDeps, row: CampaignRow): Promise<number> {
  if (row.list_id !== null) {
    const listId = row.list_id;
    return deps.queries.run(row.tenant_id, 'segment', (tx) => countMembersByStatus(tx, listId, ['active']));
  }
  if (row.segment_id === null) return 0;
  const segment = await requireSegment(deps.sql, row.tenant_id, row.segment_id);
  const now = deps.clock.now();
  return deps.queries.run(row.tenant_id, 'segment', async (tx) =>
    (await selectDefinition(tx, row.tenant_id, segment.definition, { now, strict: false })).count(),
  );
}

/** Recipients in all and those not yet handled: the fixed recipients once targeted, else the target as it stands. */
async function recipientsOf(deps: ForecastDeps, row: CampaignRow): Promise<{ recipients: number; remaining: number }> {
  if (row.status === 'sent' || row.status === 'cancelled' || row.status === 'failed') return { recipients: 0, remaining: 0 };
  const c = (await campaignCounters(deps.sql, [row.id])).get(row.id)!;
  const handled = c.queued + c.skipped_unsubscribed + c.skipped_deleted + c.skipped_suppressed + c.skipped_md5 + c.skipped_invalid + c.skipped_cancelled;
  const recipients = row.targeted_at !== null ? c.targeted : Math.max(c.targeted, await audienceSize(deps, row));
  return { recipients, remaining: Math.max(0, recipients - handled) };
}

/**
 * The forecast of sending `row` in `mode` now (or of the rest of a campaign already sending). A test key's sends are
 * simulated and count against nothing: all go today. The From domain is the one the send path will use
 * (campaignSender: 422 when there is no sender at all).
 */
export async function forecastCampaign(deps: ForecastDeps, row: CampaignRow, mode: 'live' | 'test'): Promise<SendForecast> {
  const at = deps.clock.now();
  const { recipients, remaining } = await recipientsOf(deps, row);
  const quota = await monthlyUsage(deps.sql, row.tenant_id, at);
  const quotaView = { monthly_cap: quota.cap, used: quota.used, resets_at: nextUtcMonth(at).toISOString() };
  const from = (await campaignSender(deps.sql, row, mode)).from_email;
  const name = from.slice(from.lastIndexOf('@') + 1);
  const domain = (await deps.lookups.tenantDomains(row.tenant_id)).find((d) => d.name === name);
  if (mode === 'test' || !domain) {
    // Simulated (or, live, a domain that cannot send yet: the send is refused before anything is counted).
    const plan = planDays({ at, remaining, dailyCap: remaining, sentToday: 0, domainPaused: false, quotaCap: remaining, quotaUsed: 0 });
    return {
      mode,
      recipients,
      remaining,
      today: plan.today,
      limited_by: null,
      warmup: null,
      quota: quotaView,
      days: plan.days,
      rest_starts_at: null,
      completes_on: plan.completesOn,
    };
  }
  const state = await findWarmup(deps.sql, domain.id);
  const tier = state ? effectiveTier(deps.config.warmup, state, at) : deps.config.warmup.initial_tier;
  const dailyCap = capForTier(deps.config.warmup, tier);
  const sentToday = await dailyCount(deps.sql, row.tenant_id, domain.id, utcDay(at));
  const paused = state !== undefined && state.paused_at !== null;
  const plan = planDays({ at, remaining, dailyCap, sentToday, domainPaused: paused, quotaCap: quota.cap, quotaUsed: quota.used });
  return {
    mode,
    recipients,
    remaining,
    today: plan.today,
    limited_by: plan.limitedBy,
    warmup: { domain: name, tier, daily_cap: dailyCap, sent_today: sentToday, paused },
    quota: quotaView,
    days: plan.days,
    rest_starts_at: plan.restStartsAt?.toISOString() ?? null,
    completes_on: plan.completesOn,
  };
}

/** GET /campaigns/{id}/forecast: a campaign sending (or paused) is forecast in its own mode, any other in the caller's. */
export async function campaignForecast(deps: ForecastDeps, tenantId: string, id: string, callerMode: 'live' | 'test'): Promise<SendForecast> {
  const row = await requireCampaign(deps.sql, tenantId, id);
  return forecastCampaign(deps, row, row.send_mode ?? callerMode);
}
