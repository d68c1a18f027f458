// The tenant health checks: sending domains still verified in DNS, bounce and complaint rates, quota use, webhook dead letters; each passes, warns or fails,
// and a run's verdict is the worst.
import type { WorkersConfig } from '../../config/index.js';
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';
import { deliveryCountsSince, planUse } from '../../accounts/tenants/detail-queries.js';
import { utcMonth } from '../../deliverability/warmup/tiers.js';
import { deadLetteredSince, sendingDomainStates, type CheckResult, type CheckStatus } from './queries.js';

type Thresholds = WorkersConfig['health_checks'];

export const CHECK_NAMES = ['dns_verified', 'bounce_rate', 'complaint_rate', 'quota', 'webhook_dead_letters'] as const;

const DAY_MS = 86_400_000;
const RANK: Record<CheckStatus, number> = { pass: 0, warn: 1, fail: 2 };

/** The worst status of the checks (pass when there are none). */
export function verdictOf(checks: readonly CheckResult[]): CheckStatus {
  return checks.reduce<CheckStatus>((worst, c) => (RANK[c.status] > RANK[worst] ? c.status : worst), 'pass');
}

const pct = (x: number) => `${Math.round(x * 10_000) / 100}%`;

function rateCheck(name: string, what: string, count: number, sent: number, warn: number, fail: number, minSends: number): CheckResult {
  if (sent === 0 || sent < minSends)
    return {
      name,
      status: 'pass',
      value: sent === 0 ? null : Math.round((count / sent) * 10_000) / 10_000,
      detail: `${sent} sends: too few to judge (${minSends} needed)`,
    };
  const rate = count / sent;
  const status: CheckStatus = rate >= fail ? 'fail' : rate >= warn ? 'warn' : 'pass';
  return {
    name,
    status,
    value: Math.round(rate * 10_000) / 10_000,
    detail: `${count} ${what} over ${sent} sends (${pct(rate)}; warn at ${pct(warn)}, fail at ${pct(fail)})`,
  };
}

/** Runs every check of one tenant against the database as it is now. */
export async function evaluateTenantHealth(deps: { sql: Queryable; clock: Clock; thresholds: Thresholds }, tenantId: string): Promise<CheckResult[]> {
  const h = deps.thresholds;
  const now = deps.clock.now();
  const [domains, counts, plan, deadLetters] = await Promise.all([
    sendingDomainStates(deps.sql, tenantId),
    deliveryCountsSince(deps.sql, tenantId, new Date(now.getTime() - h.rates_window_days * DAY_MS)),
    planUse(deps.sql, tenantId, utcMonth(now)),
    deadLetteredSince(deps.sql, tenantId, new Date(now.getTime() - h.dead_letter_window_days * DAY_MS)),
  ]);

  // A domain that was verified and whose records have since disappeared (the DNS drift check marks it) fails:
  // its mail now goes out without the SPF/DKIM/DMARC alignment it had.
  const drifted = domains.filter((d) => d.verified_at !== null && d.drifted_at !== null).map((d) => d.name);
  const verified = domains.filter((d) => d.verified_at !== null && d.drifted_at === null).length;
  const dns: CheckResult =
    drifted.length > 0
      ? { name: 'dns_verified', status: 'fail', value: drifted.length, detail: `DNS records no longer verified: ${drifted.join(', ')}` }
      : verified === 0
        ? {
            name: 'dns_verified',
            status: 'warn',
            value: 0,
            detail: domains.length === 0 ? 'no sending domain' : 'no verified sending domain: live sends are refused',
          }
        : { name: 'dns_verified', status: 'pass', value: 0, detail: `${verified} verified sending domain(s), none drifted` };

  const cap = plan?.monthly_send_cap ?? 0;
  const used = plan?.used ?? 0;
  const usedPct = cap === 0 ? null : Math.round((used / cap) * 1000) / 10;
  const quota: CheckResult =
    usedPct === null
      ? { name: 'quota', status: 'warn', value: null, detail: `plan ${plan?.plan_id ?? '?'} has a cap of 0: no live send is admitted` }
      : {
          name: 'quota',
          status: usedPct >= h.quota_fail_pct ? 'fail' : usedPct >= h.quota_warn_pct ? 'warn' : 'pass',
          value: usedPct,
          detail: `${used} of ${cap} sends this month (${usedPct}%)`,
        };

  const dlq: CheckResult = {
    name: 'webhook_dead_letters',
    status: deadLetters >= h.dead_letter_fail ? 'fail' : deadLetters >= h.dead_letter_warn ? 'warn' : 'pass',
    value: deadLetters,
    detail: `${deadLetters} webhook deliveries dead-lettered in ${h.dead_letter_window_days} days`,
  };

  return [
    dns,
    rateCheck('bounce_rate', 'bounces', counts.bounces, counts.sent, h.bounce_rate_warn, h.bounce_rate_fail, h.min_sends_for_rates),
    rateCheck('complaint_rate', 'complaints', counts.complaints, counts.sent, h.complaint_rate_warn, h.complaint_rate_fail, h.min_sends_for_rates),
    quota,
    dlq,
  ];
}
