// The morning digest: at 09:00 IST each tenant that sent in the last day (or whose last health check was not a pass) gets one line in the operators' chat,
// once a day.
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import { notifyChat, type ChatDeps } from '../notify/chat.js';
import { tenantDetail } from '../../accounts/tenants/detail.js';
import { claimDigest, latestHealthRun, tenantsDueForDigest } from './queries.js';

/** India Standard Time is UTC+05:30 all year (no daylight saving). */
const IST_OFFSET_MS = 330 * 60_000;
export const DIGEST_HOUR_IST = 9;
const DAY_MS = 86_400_000;
const MAX_TENANTS_PER_TICK = 10_000;

export interface DigestDeps extends ChatDeps {
  sql: Sql;
  clock: Clock;
  config: ChatDeps['config'] & Pick<Config, 'hostname' | 'warmup'>;
}

/** The 09:00 IST instant that opens the digest day `at` falls in (the previous one when `at` is before 09:00 IST). */
export function digestDayStart(at: Date): Date {
  const local = new Date(at.getTime() + IST_OFFSET_MS);
  let start = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), DIGEST_HOUR_IST) - IST_OFFSET_MS;
  if (start > at.getTime()) start -= DAY_MS;
  return new Date(start);
}

const pct = (r: number | null) => (r === null ? 'n/a' : `${Math.round(r * 10_000) / 100}%`);

/** One line about the tenant: sends in 24 h, rates, quota, the latest health verdict and its failing checks. */
export async function digestText(deps: DigestDeps, tenantId: string): Promise<string | undefined> {
  const [d, health] = await Promise.all([tenantDetail(deps, tenantId), latestHealthRun(deps.sql, tenantId)]);
  if (!d) return undefined;
  const bad = health?.checks.filter((c) => c.status !== 'pass').map((c) => `${c.name} ${c.status}`) ?? [];
  return (
    `[${deps.config.hostname}] daily digest for ${d.tenant.name} ` +
    `(${d.tenant.slug}${d.tenant.status === 'suspended' ? ', suspended' : ''}${d.tenant.is_sandbox ? ', sandbox' : ''}): ` +
    `${d.sends_24h} live sends in 24 h; ${d.rates.window_days}-day bounce rate ${pct(d.rates.bounce_rate)}, complaint rate ${pct(d.rates.complaint_rate)}; ` +
    `quota ${d.quota.used}/${d.quota.cap} (${d.quota.used_pct === null ? 'n/a' : `${d.quota.used_pct}%`}); ` +
    `health ${health ? `${health.verdict}${bad.length > 0 ? ` (${bad.join(', ')})` : ''}` : 'not checked yet'}.`
  );
}

/**
 * Posts the tenant's digest through the chat queue (logged only without MAILPATH_CHAT_WEBHOOK_URL), unless it was
 * already posted this digest day; `force` (run-now) posts regardless. The claim and the queued notification commit together.
 */
export async function postTenantDigest(deps: DigestDeps, tenantId: string, force: boolean): Promise<'queued' | 'logged' | 'already_posted' | 'unknown'> {
  const text = await digestText(deps, tenantId);
  if (text === undefined) return 'unknown';
  const now = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    if (!(await claimDigest(tx, tenantId, now, digestDayStart(now), force))) return 'already_posted' as const;
    return notifyChat(deps, tx, text);
  });
}

/** True from 09:00 IST to midnight IST: the scheduled digests post only then (run-now ignores it). */
export function digestGateOpen(at: Date): boolean {
  return new Date(at.getTime() + IST_OFFSET_MS).getUTCHours() >= DIGEST_HOUR_IST;
}

/**
 * The scheduled tick (every 30 minutes, so one falls at 09:00 IST = 03:30 UTC): before 09:00 IST it does nothing;
 * from then on each due tenant's digest is posted once per digest day (digest_last_posted_at before today's 09:00 IST).
 */
export async function runDailyDigests(deps: DigestDeps): Promise<Record<string, unknown>> {
  const now = deps.clock.now();
  if (!digestGateOpen(now)) return { skipped: 'before 09:00 IST', posted: 0 };
  const dayStart = digestDayStart(now);
  const due = await tenantsDueForDigest(deps.sql, dayStart, new Date(now.getTime() - DAY_MS), MAX_TENANTS_PER_TICK);
  let posted = 0;
  for (const tenantId of due) if (['queued', 'logged'].includes(await postTenantDigest(deps, tenantId, false))) posted++;
  return { posted, due: due.length, digest_day_start: dayStart.toISOString() };
}
