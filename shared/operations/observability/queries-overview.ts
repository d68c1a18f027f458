// SQL of GET /admin/observability's sections: one small aggregate per section, each read on its own.
import type { Queryable } from '../../db/connection.js';

export async function tenantCounts(sql: Queryable): Promise<{ total: number; active: number; suspended: number; sandbox: number }> {
  const [row] = await sql<{ total: number; active: number; suspended: number; sandbox: number }[]>`
    select count(*)::int as total,
           count(*) filter (where status = 'active')::int as active,
           count(*) filter (where status = 'suspended')::int as suspended,
           count(*) filter (where is_sandbox)::int as sandbox
      from tenants`;
  return row!;
}

export async function domainCounts(sql: Queryable): Promise<{ total: number; verified: number; pending: number; drifted: number }> {
  const [row] = await sql<{ total: number; verified: number; pending: number; drifted: number }[]>`
    select count(*)::int as total,
           count(*) filter (where verified_at is not null)::int as verified,
           count(*) filter (where verified_at is null and drifted_at is null)::int as pending,
           count(*) filter (where verified_at is null and drifted_at is not null)::int as drifted
      from domains`;
  return row!;
}

/** Sends created since `since`, by status (every status listed, zero when none). */
export async function sendCountsSince(sql: Queryable, since: Date): Promise<Record<string, number>> {
  const rows = await sql<{ status: string; n: number }[]>`
    select status, count(*)::int as n from sends where created_at >= ${since} group by status`;
  return Object.fromEntries(rows.map((r) => [r.status, r.n]));
}

export async function warmupCounts(sql: Queryable): Promise<{ domains: number; paused: number; held: number; by_tier: Record<string, number> }> {
  const rows = await sql<{ tier: number; n: number; paused: number; held: number }[]>`
    select tier, count(*)::int as n,
           count(*) filter (where paused_at is not null)::int as paused,
           count(*) filter (where held_until is not null and held_until > now())::int as held
      from domain_warmup group by tier order by tier`;
  return {
    domains: rows.reduce((n, r) => n + r.n, 0),
    paused: rows.reduce((n, r) => n + r.paused, 0),
    held: rows.reduce((n, r) => n + r.held, 0),
    by_tier: Object.fromEntries(rows.map((r) => [String(r.tier), r.n])),
  };
}

/** Domains that could send and stopped verifying, the newest drift first (at most `limit` named). */
export async function dnsDrift(
  sql: Queryable,
  limit: number,
): Promise<{ drifted: number; last_checked_at: Date | null; recent: { domain: string; tenant_id: string; drifted_at: Date }[] }> {
  const [counts] = await sql<{ drifted: number; last_checked_at: Date | null }[]>`
    select count(*) filter (where verified_at is null and drifted_at is not null)::int as drifted,
           max(last_checked_at) as last_checked_at
      from domains`;
  const recent = await sql<{ domain: string; tenant_id: string; drifted_at: Date }[]>`
    select name as domain, tenant_id, drifted_at from domains
     where verified_at is null and drifted_at is not null
     order by drifted_at desc limit ${limit}`;
  return { drifted: counts!.drifted, last_checked_at: counts!.last_checked_at, recent: [...recent] };
}

export async function appliedMigrations(sql: Queryable): Promise<number[]> {
  const rows = await sql<{ version: number }[]>`select version from schema_migrations order by version`;
  return rows.map((r) => r.version);
}
