// Flags an API key whose recent traffic looks wrong: a burst of failed authentications, a new client address, an error-rate spike.
import type { Config } from '../../config/index.js';
import type { Queryable } from '../../db/connection.js';
import { clientAddresses, windowCounts } from './activity-queries.js';

export interface Suspicion {
  flag: boolean;
  /** One line per signal, each starting with a stable code: auth_failure_burst, new_client_address, error_rate_spike. */
  reasons: string[];
}

type Thresholds = Config['limits']['key_activity']['suspicious'];

const DAY_MS = 86_400_000;
const dayOf = (at: Date, minusDays = 0) => new Date(at.getTime() - minusDays * DAY_MS).toISOString().slice(0, 10);
const percent = (rate: number) => `${Math.round(rate * 1000) / 10}%`;

/** Every signal is judged on stored counts (up to one flush interval behind). */
export async function judgeKey(db: Queryable, keyId: string, now: Date, th: Thresholds): Promise<Suspicion> {
  const reasons: string[] = [];

  const authFrom = new Date(now.getTime() - th.auth_failure_window_minutes * 60_000);
  const auth = await windowCounts(db, keyId, authFrom, new Date(now.getTime() + 60_000));
  if (auth.auth_failures >= th.auth_failure_threshold) {
    reasons.push(
      `auth_failure_burst: ${auth.auth_failures} answers 401/403 in the last ${th.auth_failure_window_minutes} minutes ` +
        `(threshold ${th.auth_failure_threshold})`,
    );
  }

  // Day granularity: "recent" is today and the days before it up to new_address_recent_days; the lookback precedes it.
  const recentFrom = dayOf(now, th.new_address_recent_days - 1);
  const lookbackTo = dayOf(now, th.new_address_recent_days);
  const lookbackFrom = dayOf(now, th.new_address_recent_days + th.new_address_lookback_days - 1);
  const known = new Set(await clientAddresses(db, keyId, lookbackFrom, lookbackTo));
  // A key with no history has no baseline: every address would be "new", which says nothing.
  if (known.size > 0) {
    const fresh = (await clientAddresses(db, keyId, recentFrom, dayOf(now))).filter((ip) => !known.has(ip));
    if (fresh.length > 0) {
      const shown = fresh.slice(0, 5).join(', ') + (fresh.length > 5 ? ` and ${fresh.length - 5} more` : '');
      reasons.push(`new_client_address: ${shown} (not seen in the ${th.new_address_lookback_days} days before)`);
    }
  }

  const errFrom = new Date(now.getTime() - th.error_rate_window_minutes * 60_000);
  const recent = await windowCounts(db, keyId, errFrom, new Date(now.getTime() + 60_000));
  if (recent.total >= th.error_rate_min_requests) {
    const baseline = await windowCounts(db, keyId, new Date(errFrom.getTime() - th.error_rate_baseline_days * DAY_MS), errFrom);
    const rate = recent.errors / recent.total;
    const baseRate = baseline.total > 0 ? baseline.errors / baseline.total : 0;
    if (rate >= th.error_rate_min && rate >= th.error_rate_factor * baseRate) {
      reasons.push(
        `error_rate_spike: ${percent(rate)} of ${recent.total} requests failed in the last ${th.error_rate_window_minutes} minutes ` +
          `(baseline ${percent(baseRate)} over the ${th.error_rate_baseline_days} days before)`,
      );
    }
  }

  return { flag: reasons.length > 0, reasons };
}
