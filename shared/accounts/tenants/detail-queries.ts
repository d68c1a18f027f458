// SQL for the operator's view of one tenant: plan and this month's quota use, sends in the last 24 hours, bounce and complaint counts over a window, and
// domains with their warm-up tier.
import type { Queryable } from '../../db/connection.js';

export interface TenantPlanUse {
  plan_id: string;
  plan_name: string;
  monthly_send_cap: number;
  /** Sends counted against the cap this UTC month. */
  used: number;
}

export async function planUse(db: Queryable, tenantId: string, month: string): Promise<TenantPlanUse | undefined> {
  const [row] = await db<TenantPlanUse[]>`
    select p.id as plan_id, p.name as plan_name, p.monthly_send_cap, coalesce(u.sent, 0)::int as used
    from tenants t join plans p on p.id = t.plan_id
    left join tenant_monthly_usage u on u.tenant_id = t.id and u.month = ${month}
    where t.id = ${tenantId}`;
  return row;
}

/** Live sends accepted since `since` (test-key sends never leave and are not counted). */
export async function liveSendsSince(db: Queryable, tenantId: string, since: Date): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from sends where tenant_id = ${tenantId} and created_at >= ${since} and mode = 'live'`;
  return row!.n;
}

export interface DeliveryCounts {
  /** Live sends that went out or are on their way (not dropped, not simulated). */
  sent: number;
  bounces: number;
  hard_bounces: number;
  complaints: number;
}

export async function deliveryCountsSince(db: Queryable, tenantId: string, since: Date): Promise<DeliveryCounts> {
  const [sent] = await db<{ n: number }[]>`
    select count(*)::int as n from sends
    where tenant_id = ${tenantId} and created_at >= ${since} and mode = 'live' and status not in ('dropped', 'simulated')`;
  const [ev] = await db<{ bounces: number; hard_bounces: number; complaints: number }[]>`
    select count(*) filter (where type = 'bounce')::int as bounces,
           count(*) filter (where type = 'bounce' and subtype = 'hard')::int as hard_bounces,
           count(*) filter (where type = 'complaint')::int as complaints
    from events where tenant_id = ${tenantId} and occurred_at >= ${since} and type in ('bounce', 'complaint')`;
  return { sent: sent!.n, ...ev! };
}

export interface TenantDomainRow {
  id: string;
  name: string;
  verified_at: Date | null;
  drifted_at: Date | null;
  /** 0 for a domain that never sent (no warm-up row yet). */
  warmup_tier: number;
  tier_changed_at: Date | null;
  last_send_at: Date | null;
}

export async function tenantDomains(db: Queryable, tenantId: string, limit: number): Promise<TenantDomainRow[]> {
  return db<TenantDomainRow[]>`
    select d.id, d.name, d.verified_at, d.drifted_at, coalesce(w.tier, 0)::int as warmup_tier, w.tier_changed_at, w.last_send_at
    from domains d left join domain_warmup w on w.domain_id = d.id
    where d.tenant_id = ${tenantId} and d.superseded_at is null
    order by d.name
    limit ${limit}`;
}
