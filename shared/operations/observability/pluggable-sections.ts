// The observability sections read from other modules: the tenant health checks (each tenant's latest run by verdict) and the per-ESP scores.
import { healthCheckSummary } from '../tenant-health/queries.js';
import { espScores } from '../../engagement/analytics/esp-scores.js';
import type { OverviewDeps, Section } from './section.js';

export interface HealthChecksSummary {
  tenants_checked: number;
  passing: number;
  warning: number;
  failing: number;
  last_run_at: Date | null;
}

export interface EspScore {
  provider: string;
  score: number;
  sample_size: number;
}

/** The platform's per-ESP scores (every tenant's mail of the last 30 days, scored as the tenant endpoint scores it); only scored providers. */
async function platformEspScores(d: OverviewDeps): Promise<EspScore[]> {
  if (!d.classifier) throw new Error('no mailbox-provider classifier wired');
  const { items } = await espScores({ sql: d.sql, clock: d.clock, classifier: d.classifier }, null);
  return items.flatMap((i) => (i.score === null ? [] : [{ provider: i.esp, score: i.score, sample_size: i.sent }]));
}

export const ZERO_HEALTHCHECKS = (): HealthChecksSummary => ({ tenants_checked: 0, passing: 0, warning: 0, failing: 0, last_run_at: null });
export const ZERO_ESP_SCORES = (): EspScore[] => [];

export const healthChecksSection: Section<HealthChecksSummary> = { compute: (d) => healthCheckSummary(d.sql), zero: ZERO_HEALTHCHECKS };
export const espScoresSection: Section<EspScore[]> = { compute: platformEspScores, zero: ZERO_ESP_SCORES };
