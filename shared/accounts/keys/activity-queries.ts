// SQL for API key activity: batched upserts of per-minute counts and client addresses, the reads behind the views, pruning.
import type { Queryable } from '../../db/connection.js';

export interface MinuteCount {
  keyId: string;
  minute: Date;
  route: string;
  status: number;
  count: number;
  latencyMsSum: number;
  buckets: number[];
}

export interface ClientDayCount {
  keyId: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  ip: string;
  count: number;
  lastSeen: Date;
}

/**
 * Adds a batch of counts onto the minute rows. Rows go in key order so two processes flushing overlapping
 * rows lock them in the same order (no deadlock); a key deleted meanwhile is skipped rather than failing the batch.
 */
export async function upsertActivityMinutes(db: Queryable, rows: MinuteCount[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort(
    (a, b) => a.keyId.localeCompare(b.keyId) || a.minute.getTime() - b.minute.getTime() || a.route.localeCompare(b.route) || a.status - b.status,
  );
  await db`
    insert into api_key_activity (key_id, minute, route, status, count, latency_ms_sum, latency_buckets)
    select u.key_id, u.minute, u.route, u.status, u.count, u.latency_sum, u.buckets::int[]
    from unnest(${sorted.map((r) => r.keyId)}::uuid[], ${sorted.map((r) => r.minute.toISOString())}::timestamptz[],
                ${sorted.map((r) => r.route)}::text[], ${sorted.map((r) => r.status)}::smallint[], ${sorted.map((r) => r.count)}::int[],
                ${sorted.map((r) => Math.round(r.latencyMsSum))}::bigint[], ${sorted.map((r) => `{${r.buckets.join(',')}}`)}::text[])
         with ordinality as u(key_id, minute, route, status, count, latency_sum, buckets, ord)
    where exists (select 1 from api_keys k where k.id = u.key_id)
    order by u.ord
    on conflict (key_id, minute, route, status) do update set
      count = api_key_activity.count + excluded.count,
      latency_ms_sum = api_key_activity.latency_ms_sum + excluded.latency_ms_sum,
      latency_buckets = array(
        select coalesce(a, 0) + coalesce(b, 0)
        from unnest(api_key_activity.latency_buckets, excluded.latency_buckets) with ordinality as x(a, b, i) order by i)`;
}

export async function upsertClientDays(db: Queryable, rows: ClientDayCount[]): Promise<void> {
  if (rows.length === 0) return;
  const sorted = [...rows].sort((a, b) => a.keyId.localeCompare(b.keyId) || a.day.localeCompare(b.day) || a.ip.localeCompare(b.ip));
  await db`
    insert into api_key_client_days (key_id, day, client_ip, count, last_seen_at)
    select u.key_id, u.day, u.ip, u.count, u.last_seen
    from unnest(${sorted.map((r) => r.keyId)}::uuid[], ${sorted.map((r) => r.day)}::date[], ${sorted.map((r) => r.ip)}::text[],
                ${sorted.map((r) => r.count)}::int[], ${sorted.map((r) => r.lastSeen.toISOString())}::timestamptz[])
         with ordinality as u(key_id, day, ip, count, last_seen, ord)
    where exists (select 1 from api_keys k where k.id = u.key_id)
    order by u.ord
    on conflict (key_id, day, client_ip) do update set
      count = api_key_client_days.count + excluded.count,
      last_seen_at = greatest(api_key_client_days.last_seen_at, excluded.last_seen_at)`;
}

/** Deletes minute rows before `before` and client rows of days before its UTC day. */
export async function pruneKeyActivity(db: Queryable, before: Date): Promise<{ minutes: number; clients: number }> {
  const minutes = await db`delete from api_key_activity where minute < ${before}`;
  const clients = await db`delete from api_key_client_days where day < (${before}::timestamptz at time zone 'UTC')::date`;
  return { minutes: minutes.count, clients: clients.count };
}

export interface ActivityKey {
  id: string;
  name: string;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  last_used_ip: string | null;
  revoked_at: Date | null;
}

const keyColumns = (db: Queryable) => db`id, name, prefix, created_at, last_used_at, last_used_ip, revoked_at`;

/** A key of the tenant, revoked or not: a revoked key's activity (who still uses it) is worth seeing. */
export async function findTenantKey(db: Queryable, tenantId: string, keyId: string): Promise<ActivityKey | undefined> {
  const [row] = await db<ActivityKey[]>`select ${keyColumns(db)} from api_keys where tenant_id = ${tenantId} and id = ${keyId}`;
  return row;
}

export function listUnrevokedKeys(db: Queryable, tenantId: string): Promise<ActivityKey[]> {
  return db<ActivityKey[]>`
    select ${keyColumns(db)} from api_keys where tenant_id = ${tenantId} and revoked_at is null order by created_at desc, id`;
}

/** Requests per key per UTC day (YYYY-MM-DD) since `since`; days without requests are absent. */
export function dailyCounts(db: Queryable, keyIds: string[], since: Date): Promise<{ key_id: string; day: string; count: number }[]> {
  if (keyIds.length === 0) return Promise.resolve([]);
  return db<{ key_id: string; day: string; count: number }[]>`
    select key_id, to_char(minute at time zone 'UTC', 'YYYY-MM-DD') as day, sum(count)::int as count
    from api_key_activity where key_id = any(${keyIds}::uuid[]) and minute >= ${since}
    group by 1, 2`;
}

export function topRoutes(db: Queryable, keyId: string, since: Date, limit: number): Promise<{ route: string; count: number; errors: number }[]> {
  return db<{ route: string; count: number; errors: number }[]>`
    select route, sum(count)::int as count, coalesce(sum(count) filter (where status >= 400), 0)::int as errors
    from api_key_activity where key_id = ${keyId} and minute >= ${since}
    group by route order by count desc, route limit ${limit}`;
}

export function statusCounts(db: Queryable, keyId: string, since: Date): Promise<{ status: number; count: number }[]> {
  return db<{ status: number; count: number }[]>`
    select status::int as status, sum(count)::int as count
    from api_key_activity where key_id = ${keyId} and minute >= ${since}
    group by status order by status`;
}

/** The element-wise sum of the latency histograms since `since`. */
export async function latencyTotals(db: Queryable, keyId: string, since: Date): Promise<number[]> {
  const rows = await db<{ i: number; n: number }[]>`
    select x.i::int as i, sum(x.n)::float8 as n
    from api_key_activity a, unnest(a.latency_buckets) with ordinality as x(n, i)
    where a.key_id = ${keyId} and a.minute >= ${since}
    group by x.i`;
  const totals: number[] = [];
  for (const r of rows) totals[r.i - 1] = r.n;
  return Array.from(totals, (n) => n ?? 0);
}

/** Requests, errors (status >= 400) and failed authentications (401, 403) in [from, to). */
export async function windowCounts(db: Queryable, keyId: string, from: Date, to: Date): Promise<{ total: number; errors: number; auth_failures: number }> {
  const [row] = await db<{ total: number; errors: number; auth_failures: number }[]>`
    select coalesce(sum(count), 0)::int as total,
           coalesce(sum(count) filter (where status >= 400), 0)::int as errors,
           coalesce(sum(count) filter (where status in (401, 403)), 0)::int as auth_failures
    from api_key_activity where key_id = ${keyId} and minute >= ${from} and minute < ${to}`;
  return row!;
}

/** The distinct client addresses of a key over the UTC days [fromDay, toDay] (YYYY-MM-DD). */
export async function clientAddresses(db: Queryable, keyId: string, fromDay: string, toDay: string): Promise<string[]> {
  const rows = await db<{ client_ip: string }[]>`
    select distinct client_ip from api_key_client_days
    where key_id = ${keyId} and day >= ${fromDay}::date and day <= ${toDay}::date order by client_ip`;
  return rows.map((r) => r.client_ip);
}
