// Monthly send quota: the tenant's plan cap, this month's usage, consumed atomically, and the X-Quota-* headers.
import type { Queryable } from '../../db/connection.js';
import { nextUtcMonth, utcMonth } from '../../deliverability/warmup/tiers.js';

export interface Quota {
  used: number;
  cap: number;
}

/** The month's usage and plan cap of each tenant (one round trip for any number); a tenant without a plan has cap 0. */
export async function monthlyUsages(db: Queryable, tenantIds: readonly string[], month: string): Promise<Map<string, Quota>> {
  const rows = await db<{ id: string; sent: number | null; cap: number }[]>`
    select t.id, u.sent, p.monthly_send_cap as cap
    from tenants t join plans p on p.id = t.plan_id
    left join tenant_monthly_usage u on u.tenant_id = t.id and u.month = ${month}
    where t.id = any(${[...tenantIds]}::uuid[])`;
  return new Map(rows.map((r) => [r.id, { used: r.sent ?? 0, cap: r.cap }]));
}

export async function monthlyUsage(db: Queryable, tenantId: string, at: Date): Promise<Quota> {
  return (await monthlyUsages(db, [tenantId], utcMonth(at))).get(tenantId) ?? { used: 0, cap: 0 };
}

export interface MonthlyTake {
  tenantId: string;
  /** First day of the UTC month, YYYY-MM-01. */
  month: string;
  /** How many sends to count. */
  want: number;
}

export interface MonthlyTaken {
  tenantId: string;
  month: string;
  cap: number;
  /** How many of `want` were counted: fewer (down to 0) at the cap. */
  granted: number;
  /** The month's usage after this take (undefined when nothing was counted). */
  used: number | undefined;
}

/**
 * Counts sends against each tenant's plan cap, up to the cap: one statement for any number of
 * (tenant, month) takes (one per pair), so concurrent sends share a round trip. Exact under
 * concurrency: the conditional upsert takes the row lock, and `last_grant` records what this
 * statement took (the SET sees the row as it was, so the grant needs no separate read).
 */
export async function consumeMonthlyMany(db: Queryable, takes: MonthlyTake[]): Promise<MonthlyTaken[]> {
  if (takes.length === 0) return [];
  const rows = await db<{ tenant_id: string; month: string; cap: number; sent: number | null; granted: number }[]>`
    with req as (
      select r.tenant_id, r.month, r.want, p.monthly_send_cap as cap
      from unnest(${takes.map((k) => k.tenantId)}::uuid[], ${takes.map((k) => k.month)}::date[], ${takes.map((k) => k.want)}::int[])
           as r(tenant_id, month, want)
      join tenants t on t.id = r.tenant_id join plans p on p.id = t.plan_id
    ), counted as (
      insert into tenant_monthly_usage as u (tenant_id, month, sent, last_grant)
      select tenant_id, month, least(want, cap), least(want, cap) from req where cap > 0
      on conflict (tenant_id, month) do update
        set sent = u.sent + least(excluded.last_grant, (select r.cap from req r where r.tenant_id = u.tenant_id and r.month = u.month) - u.sent),
            last_grant = least(excluded.last_grant, (select r.cap from req r where r.tenant_id = u.tenant_id and r.month = u.month) - u.sent)
        where u.sent < (select r.cap from req r where r.tenant_id = u.tenant_id and r.month = u.month)
      returning u.tenant_id, u.month, u.sent, u.last_grant
    )
    select req.tenant_id, to_char(req.month, 'YYYY-MM-DD') as month, req.cap, c.sent, coalesce(c.last_grant, 0) as granted
    from req left join counted c on c.tenant_id = req.tenant_id and c.month = req.month`;
  return takes.map((k) => {
    const row = rows.find((r) => r.tenant_id === k.tenantId && r.month === k.month);
    // No row: the tenant has no plan, which admits nothing.
    if (!row) return { tenantId: k.tenantId, month: k.month, cap: 0, granted: 0, used: undefined };
    return { tenantId: k.tenantId, month: k.month, cap: row.cap, granted: row.granted, used: row.granted > 0 ? row.sent! : undefined };
  });
}

/** Gives a counted send back (e.g. the send failed to commit after counting in another transaction). */
export async function releaseQuota(db: Queryable, tenantId: string, at: Date): Promise<void> {
  await db`update tenant_monthly_usage set sent = greatest(sent - 1, 0) where tenant_id = ${tenantId} and month = ${utcMonth(at)}`;
}

/** The share of the cap at which the tenant is warned (X-Quota-Warning, the dashboard's notice). */
export const QUOTA_WARNING_SHARE = 0.8;

export interface QuotaReport {
  /** YYYY-MM (UTC). */
  month: string;
  used: number;
  cap: number;
  remaining: number;
  /** used / cap in percent, one decimal; null when the cap is 0. */
  used_pct: number | null;
  warning: boolean;
  /** 00:00 UTC on the first of next month, when the count starts again. */
  resets_at: string;
}

/** This month's usage of one tenant against its plan cap, as the tenant reads it (GET /quota). */
export async function quotaReport(db: Queryable, tenantId: string, at: Date): Promise<QuotaReport> {
  const { used, cap } = await monthlyUsage(db, tenantId, at);
  return {
    month: utcMonth(at).slice(0, 7),
    used,
    cap,
    remaining: Math.max(0, cap - used),
    used_pct: cap === 0 ? null : Math.round((used / cap) * 1000) / 10,
    warning: cap > 0 && used >= cap * QUOTA_WARNING_SHARE,
    resets_at: nextUtcMonth(at).toISOString(),
  };
}
