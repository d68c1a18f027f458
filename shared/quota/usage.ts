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
 * Counts one live send if the month's usage is below the cap; returns the new usage, or
 * undefined at the cap (402). One conditional upsert: exact under concurrency.
 */
export async function consumeQuota(db: Queryable, tenantId: string, at: Date, cap: number): Promise<number | undefined> {
  if (cap <= 0) return undefined;
  const [row] = await db<{ sent: number }[]>`
    insert into tenant_monthly_usage as u (tenant_id, month, sent) values (${tenantId}, ${utcMonth(at)}, 1)
    on conflict (tenant_id, month) do update set sent = u.sent + 1
    where u.sent < ${cap}
    returning sent`;
  return row?.sent;
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
