// SQL for the super-admin's tenant settings: plan and sandbox flag.
import type { Queryable } from '../../db/connection.js';

export async function planExists(db: Queryable, planId: string): Promise<{ id: string; name: string; monthly_send_cap: number } | undefined> {
  const [row] = await db<{ id: string; name: string; monthly_send_cap: number }[]>`select id, name, monthly_send_cap from plans where id = ${planId}`;
  return row;
}

export async function setTenantPlan(tx: Queryable, tenantId: string, planId: string, at: Date): Promise<void> {
  await tx`update tenants set plan_id = ${planId}, updated_at = ${at} where id = ${tenantId}`;
}

export async function setTenantSandbox(tx: Queryable, tenantId: string, isSandbox: boolean, at: Date): Promise<void> {
  await tx`update tenants set is_sandbox = ${isSandbox}, updated_at = ${at} where id = ${tenantId}`;
}

/** Sends counted against the cap in a month (YYYY-MM-01); the plan change leaves this row alone. */
export async function monthlyUsage(db: Queryable, tenantId: string, month: string): Promise<number> {
  const [row] = await db<{ sent: number }[]>`select sent::int as sent from tenant_monthly_usage where tenant_id = ${tenantId} and month = ${month}`;
  return row?.sent ?? 0;
}

/** The plans a tenant can be on (the super-admin tenant's own left out), smallest first. */
export async function tenantPlanIds(db: Queryable): Promise<string[]> {
  const rows = await db<{ id: string }[]>`select id from plans where id <> 'platform' order by monthly_send_cap`;
  return rows.map((p) => p.id);
}
