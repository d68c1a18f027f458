// The observability sections whose sources other modules are adding (tenant health checks, per-ESP scores): each a Section that says 'not available' until wired.
//
// Wiring one is a one-line change here: replace `notAvailable(...)` with a Section whose compute reads the new
// module, e.g. `export const healthChecksSection: Section<HealthChecksSummary> = { compute: (d) => healthCheckSummary(d.sql), zero: ZERO_HEALTHCHECKS };`.
import type { Section } from './overview.js';

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

export const ZERO_HEALTHCHECKS = (): HealthChecksSummary => ({ tenants_checked: 0, passing: 0, warning: 0, failing: 0, last_run_at: null });
export const ZERO_ESP_SCORES = (): EspScore[] => [];

const NOT_AVAILABLE = 'not available';

/** A section with no source: its zero value, and a note saying so (not an error). */
function notAvailable<T>(zero: () => T): Section<T> {
  return { compute: async () => zero(), zero, unavailable: NOT_AVAILABLE };
}

export const healthChecksSection: Section<HealthChecksSummary> = notAvailable(ZERO_HEALTHCHECKS);
export const espScoresSection: Section<EspScore[]> = notAvailable(ZERO_ESP_SCORES);
