// Monthly send quota: the tenant's plan cap, this month's usage, consumed atomically, and the X-Quota-* headers.
import type { Queryable } from '../db/connection.js';
import { utcMonth } from '../warmup/tiers.js';

export interface Quota {
  used: number;
  cap: number;
}


export async function monthlyUsage(db: Queryable, tenantId: string, at: Date): Promise<Quota> {
  const [row] = await db<{ sent: number | null; cap: number }[]>`
    select u.sent, p.monthly_send_cap as cap
    from tenants t join plans p on p.id = t.plan_id
    left join tenant_monthly_usage u on u.tenant_id = t.id and u.month = ${utcMonth(at)}
    where t.id = ${tenantId}`;
  return { used: row?.sent ?? 0, cap: row?.cap ?? 0 };
}

/**
 * Counts one live send if the month's usage is below the plan's cap: the new usage, or undefined
 * at the cap (402). One statement, the cap looked up in it: the send path's one round trip, and
 * exact under concurrency (the conditional upsert takes the row lock).
 */
export async function consumeMonthly(db: Queryable, tenantId: string, at: Date): Promise<{ used: number | undefined; cap: number }> {
  const month = utcMonth(at);
  const [row] = await db<{ used: number | null; cap: number | null }[]>`
    with plan as (
      select p.monthly_send_cap as cap from tenants t join plans p on p.id = t.plan_id where t.id = ${tenantId}
    ), counted as (
      insert into tenant_monthly_usage as u (tenant_id, month, sent)
      select ${tenantId}, ${month}, 1 from plan where plan.cap > 0
      on conflict (tenant_id, month) do update set sent = u.sent + 1
      where u.sent < (select cap from plan)
      returning sent
    )
    select (select sent from counted) as used, (select cap from plan) as cap`;
  return { used: row?.used ?? undefined, cap: row?.cap ?? 0 };
}

/** Gives a counted send back (e.g. the send failed to commit after counting in another transaction). */
export async function releaseQuota(db: Queryable, tenantId: string, at: Date): Promise<void> {
  await db`update tenant_monthly_usage set sent = greatest(sent - 1, 0) where tenant_id = ${tenantId} and month = ${utcMonth(at)}`;
}

/** The spec's quota headers; the warning flag at 80 % of the cap or more. */
export function quotaHeaders(q: Quota): Record<string, string> {
  const headers: Record<string, string> = {
    'X-Quota-Used': String(q.used),
    'X-Quota-Cap': String(q.cap),
    'X-Quota-Remaining': String(Math.max(0, q.cap - q.used)),
  };
  if (q.cap > 0 && q.used >= q.cap * 0.8) headers['X-Quota-Warning'] = '1';
  return headers;
}
