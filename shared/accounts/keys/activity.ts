// The API key activity views: usage per key and day, one key's 30-day activity, and its request counts for rate-limit status.
import type { Clock } from '../../kernel/clock.js';
import type { Config } from '../../config/index.js';
import type { Sql } from '../../db/connection.js';
import { notFound } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { percentile } from './activity-histogram.js';
import { dailyCounts, findTenantKey, latencyTotals, listUnrevokedKeys, statusCounts, topRoutes, windowCounts, type ActivityKey } from './activity-queries.js';
import type { KeyActivityRecorder } from './activity-recorder.js';
import { judgeKey, type Suspicion } from './activity-suspicious.js';

export interface ActivityDeps {
  sql: Sql;
  config: Config;
  clock: Clock;
}

const DAY_MS = 86_400_000;
export const ACTIVITY_DAYS = 30;
export const TOP_ENDPOINTS = 10;

/** 00:00 UTC of the day `daysBack` days before `now`'s. */
function utcDayStart(now: Date, daysBack = 0): Date {
  const d = new Date(now.getTime() - daysBack * DAY_MS);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

/** The last `days` UTC days ending today, oldest first, each with its count (0 when absent). */
function series(now: Date, days: number, counts: Map<string, number>): { date: string; count: number }[] {
  const out: { date: string; count: number }[] = [];
  for (let i = days - 1; i >= 0; i--) {
    const date = utcDayStart(now, i).toISOString().slice(0, 10);
    out.push({ date, count: counts.get(date) ?? 0 });
  }
  return out;
}

export interface KeyUsage {
  key: ActivityKey;
  total: number;
  series: { date: string; count: number }[];
}

/** Every unrevoked key of the tenant with its requests per UTC day over the last `days` days (today included). */
export async function keyUsage(deps: ActivityDeps, tenantId: string, days: number): Promise<KeyUsage[]> {
  const now = deps.clock.now();
  const keys = await listUnrevokedKeys(deps.sql, tenantId);
  const rows = await dailyCounts(
    deps.sql,
    keys.map((k) => k.id),
    utcDayStart(now, days - 1),
  );
  const byKey = new Map<string, Map<string, number>>();
  for (const r of rows) {
    if (!byKey.has(r.key_id)) byKey.set(r.key_id, new Map());
    byKey.get(r.key_id)!.set(r.day, r.count);
  }
  return keys.map((key) => {
    const s = series(now, days, byKey.get(key.id) ?? new Map());
    return { key, total: s.reduce((a, d) => a + d.count, 0), series: s };
  });
}

async function requireKey(deps: ActivityDeps, tenantId: string, keyId: string): Promise<ActivityKey> {
  const key = isUuid(keyId) ? await findTenantKey(deps.sql, tenantId, keyId) : undefined;
  if (!key) throw notFound('API key');
  return key;
}

export interface KeyActivity {
  calls_per_day: { date: string; count: number }[];
  top_endpoints: { route: string; count: number; errors: number }[];
  status_codes: { status: number; count: number }[];
  p95_latency_ms: number | null;
  suspicious: Suspicion;
}

/** One key's last 30 UTC days (revoked keys included: who still uses a revoked key is worth knowing). */
export async function keyActivity(deps: ActivityDeps, tenantId: string, keyId: string): Promise<KeyActivity> {
  const key = await requireKey(deps, tenantId, keyId);
  const now = deps.clock.now();
  const since = utcDayStart(now, ACTIVITY_DAYS - 1);
  const daily = await dailyCounts(deps.sql, [key.id], since);
  return {
    calls_per_day: series(now, ACTIVITY_DAYS, new Map(daily.map((r) => [r.day, r.count]))),
    top_endpoints: await topRoutes(deps.sql, key.id, since, TOP_ENDPOINTS),
    status_codes: await statusCounts(deps.sql, key.id, since),
    p95_latency_ms: percentile(await latencyTotals(deps.sql, key.id, since), 0.95),
    suspicious: await judgeKey(deps.sql, key.id, now, deps.config.limits.key_activity.suspicious),
  };
}

export interface RateLimitStatus {
  key_id: string;
  key_name: string;
  requests_last_minute: number;
  requests_last_hour: number;
  requests_today: number;
}

/**
 * Request counts of a key: the current UTC minute, the current minute and the 59
 * before it, and the UTC day so far. Stored counts plus this process's unwritten ones; other processes' unwritten
 * counts (at most one flush interval) are not in yet.
 */
export async function rateLimitStatus(deps: ActivityDeps, recorder: KeyActivityRecorder, tenantId: string, keyId: string): Promise<RateLimitStatus> {
  const key = await requireKey(deps, tenantId, keyId);
  const now = deps.clock.now();
  const minute = new Date(Math.floor(now.getTime() / 60_000) * 60_000);
  const hour = new Date(minute.getTime() - 59 * 60_000);
  const today = utcDayStart(now);
  const end = new Date(minute.getTime() + 60_000);
  const count = async (from: Date) => (await windowCounts(deps.sql, key.id, from, end)).total + recorder.pendingSince(key.id, from);
  return {
    key_id: key.id,
    key_name: key.name,
    requests_last_minute: await count(minute),
    requests_last_hour: await count(hour),
    requests_today: await count(today),
  };
}
