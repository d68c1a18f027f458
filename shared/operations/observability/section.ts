// What a section of the observability overview is (overview.ts lists them; pluggable-sections.ts holds those read from other modules).
import type { ProviderClassifier } from '../../engagement/analytics/provider-classifier.js';
import type { Clock } from '../../kernel/clock.js';
import type { Queryable } from '../../db/connection.js';

export interface OverviewDeps {
  sql: Queryable;
  clock: Clock;
  /** Classifies recipient domains into mailbox providers (by name, else MX) for the per-ESP scores. */
  classifier?: ProviderClassifier;
}

/** A section: how to compute it, and the value it shows when that fails. */
export interface Section<T> {
  compute(deps: OverviewDeps): Promise<T>;
  zero(): T;
}
