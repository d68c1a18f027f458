// GET /admin/observability: the platform at a glance, one section per concern; each section is computed on its own, and a failing one degrades to its zero
// value and is named in errors.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { loadMigrations } from '../../db/migrate.js';
import { appliedMigrations, dnsDrift, domainCounts, sendCountsSince, tenantCounts, warmupCounts } from './queries-overview.js';
import { espScoresSection, healthChecksSection } from './pluggable-sections.js';
import type { OverviewDeps, Section } from './section.js';

const SEND_STATUSES = ['queued', 'deferred', 'sending', 'delivered', 'bounced', 'dropped', 'simulated', 'failed'] as const;

// The event-loop delay of this process, sampled from the first overview on (a monitor costs a timer per resolution).
let loopDelay: IntervalHistogram | undefined;
function eventLoopDelay(): IntervalHistogram {
  if (!loopDelay) {
    loopDelay = monitorEventLoopDelay({ resolution: 20 });
    loopDelay.enable();
  }
  return loopDelay;
}
const ms = (ns: number) => Math.round((Number.isFinite(ns) ? ns : 0) / 1e4) / 100;
const mb = (bytes: number) => Math.round(bytes / 1048576);

export const SECTIONS = {
  tenants: { compute: (d) => tenantCounts(d.sql), zero: () => ({ total: 0, active: 0, suspended: 0, sandbox: 0 }) } as Section<
    Awaited<ReturnType<typeof tenantCounts>>
  >,
  domains: { compute: (d) => domainCounts(d.sql), zero: () => ({ total: 0, verified: 0, pending: 0, drifted: 0 }) } as Section<
    Awaited<ReturnType<typeof domainCounts>>
  >,
  sends_24h: {
    async compute(d) {
      const counts = await sendCountsSince(d.sql, new Date(d.clock.now().getTime() - 86_400_000));
      const by_status = Object.fromEntries(SEND_STATUSES.map((s) => [s, counts[s] ?? 0])) as Record<(typeof SEND_STATUSES)[number], number>;
      return { total: Object.values(by_status).reduce((a, b) => a + b, 0), by_status };
    },
    zero: () => ({ total: 0, by_status: Object.fromEntries(SEND_STATUSES.map((s) => [s, 0])) as Record<(typeof SEND_STATUSES)[number], number> }),
  } as Section<{ total: number; by_status: Record<(typeof SEND_STATUSES)[number], number> }>,
  warmup: { compute: (d) => warmupCounts(d.sql), zero: () => ({ domains: 0, paused: 0, held: 0, by_tier: {} }) } as Section<
    Awaited<ReturnType<typeof warmupCounts>>
  >,
  healthchecks: healthChecksSection,
  esp_scores: espScoresSection,
  dns_drift: { compute: (d) => dnsDrift(d.sql, 10), zero: () => ({ drifted: 0, last_checked_at: null, recent: [] }) } as Section<
    Awaited<ReturnType<typeof dnsDrift>>
  >,
  schema_drift: {
    async compute(d) {
      const expected = loadMigrations().map((m) => m.version);
      const applied = await appliedMigrations(d.sql);
      const appliedSet = new Set(applied);
      const expectedSet = new Set(expected);
      return {
        expected: expected.length,
        applied: applied.length,
        latest_expected: expected.at(-1) ?? null,
        latest_applied: applied.at(-1) ?? null,
        missing: expected.filter((v) => !appliedSet.has(v)),
        unknown: applied.filter((v) => !expectedSet.has(v)),
        in_sync: expected.length === applied.length && expected.every((v) => appliedSet.has(v)),
      };
    },
    zero: () => ({ expected: 0, applied: 0, latest_expected: null, latest_applied: null, missing: [], unknown: [], in_sync: false }),
  } as Section<{
    expected: number;
    applied: number;
    latest_expected: number | null;
    latest_applied: number | null;
    missing: number[];
    unknown: number[];
    in_sync: boolean;
  }>,
  process: {
    async compute() {
      const memory = process.memoryUsage();
      const delay = eventLoopDelay();
      return {
        pid: process.pid,
        uptime_s: Math.round(process.uptime()),
        memory_mb: { rss: mb(memory.rss), heap_used: mb(memory.heapUsed), heap_total: mb(memory.heapTotal), external: mb(memory.external) },
        event_loop_delay_ms: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      };
    },
    zero: () => ({ pid: 0, uptime_s: 0, memory_mb: { rss: 0, heap_used: 0, heap_total: 0, external: 0 }, event_loop_delay_ms: { p50: 0, p99: 0, max: 0 } }),
  } as Section<{
    pid: number;
    uptime_s: number;
    memory_mb: Record<'rss' | 'heap_used' | 'heap_total' | 'external', number>;
    event_loop_delay_ms: Record<'p50' | 'p99' | 'max', number>;
  }>,
};

type Sections = typeof SECTIONS;
type Values = { [K in keyof Sections]: Sections[K] extends Section<infer T> ? T : never };

export type Overview = Values & {
  as_of: Date;
  /** Sections that have no source yet, with why. */
  errors: { section: string; message: string }[];
};

/** Every section at once, each on its own: one failing never fails the others or the call. */
export async function observabilityOverview(deps: OverviewDeps, sections: Sections = SECTIONS): Promise<Overview> {
  const names = Object.keys(sections) as (keyof Sections)[];
  const errors: Overview['errors'] = [];
  const settled = await Promise.allSettled(names.map((name) => (sections[name] as Section<unknown>).compute(deps)));
  const values = {} as Record<string, unknown>;
  names.forEach((name, i) => {
    const section = sections[name] as Section<unknown>;
    const result = settled[i]!;
    if (result.status === 'fulfilled') values[name] = result.value;
    else {
      values[name] = section.zero();
      errors.push({ section: name, message: result.reason instanceof Error ? result.reason.message : String(result.reason) });
    }
  });
  return { ...(values as Values), as_of: deps.clock.now(), errors };
}
