// Cohort retention by acquisition week: of the contacts created in each of the last N weeks, the share active (sent to, opening or clicking) in each week
// since; cached in process for an hour.
import type { Clock } from '../../kernel/clock.js';
import type { TenantQueries } from '../../db/deadline.js';
import { cohortActivity, type CohortMetric } from './queries.js';
import { TtlCache } from './ttl-cache.js';

export const COHORT_WEEKS = { min: 4, max: 12, default: 8 } as const;
export const COHORT_CACHE_MS = 3_600_000;
const WEEK = 7 * 86_400_000;

export interface CohortRow {
  /** Monday 00:00 UTC of the acquisition week. */
  week_start: string;
  size: number;
  /** Per week offset 0..max_weeks-1: contacts active that week; null for weeks still in the future. */
  active: (number | null)[];
  /** active / size, rounded to 4 decimals; null for future weeks (and for an empty cohort). */
  retention: (number | null)[];
}

export interface CohortReport {
  cohort: 'acquisition_week';
  metric: CohortMetric;
  max_weeks: number;
  cohorts: CohortRow[];
}

/** Monday 00:00 UTC of the week holding `at` (ISO weeks). */
export function weekStart(at: Date): Date {
  const day = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));
  return new Date(day.getTime() - ((day.getUTCDay() + 6) % 7) * 86_400_000);
}

/**
 * The last `weeks` acquisition weeks, oldest first, the current (partial) week last. Cell k of a cohort counts its
 * contacts with an event of the metric in its k-th week; a week that has not begun yet is null, the current week
 * counts so far. Answers are kept an hour per (tenant, metric, weeks): a cohort chart moves by the week.
 */
export class CohortRetention {
  private readonly cache: TtlCache<CohortReport>;

  constructor(
    /** queries: the read runs as an analytics query (its deadline, the tenant's slots). */
    private readonly deps: { queries: Pick<TenantQueries, 'run'>; clock: Clock },
    cacheMs = COHORT_CACHE_MS,
  ) {
    this.cache = new TtlCache(deps.clock, cacheMs);
  }

  report(tenantId: string, metric: CohortMetric, weeks: number): Promise<CohortReport> {
    return this.cache.getOrLoad(`${tenantId}/${metric}/${weeks}`, () => this.compute(tenantId, metric, weeks));
  }

  private async compute(tenantId: string, metric: CohortMetric, weeks: number): Promise<CohortReport> {
    const now = this.deps.clock.now();
    const current = weekStart(now);
    const start = new Date(current.getTime() - (weeks - 1) * WEEK);
    const { sizes, cells } = await this.deps.queries.run(tenantId, 'analytics', (tx) => cohortActivity(tx, tenantId, metric, start, now));
    const sizeOf = new Map(sizes.map((s) => [s.cohort, s.contacts]));
    const activeOf = new Map(cells.map((c) => [`${c.cohort}/${c.offset}`, c.contacts]));
    const cohorts: CohortRow[] = [];
    for (let c = 0; c < weeks; c++) {
      const size = sizeOf.get(c) ?? 0;
      const active: (number | null)[] = [];
      const retention: (number | null)[] = [];
      for (let k = 0; k < weeks; k++) {
        const future = c + k > weeks - 1;
        const n = future ? null : (activeOf.get(`${c}/${k}`) ?? 0);
        active.push(n);
        retention.push(n === null || size === 0 ? null : Math.round((n / size) * 10_000) / 10_000);
      }
      cohorts.push({ week_start: new Date(start.getTime() + c * WEEK).toISOString().slice(0, 10), size, active, retention });
    }
    return { cohort: 'acquisition_week', metric, max_weeks: weeks, cohorts };
  }
}
