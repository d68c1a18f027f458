// SQL for the tenant health checks (their inputs and stored runs) and the morning digest's gate.
import type { Queryable } from '../../db/connection.js';

export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface CheckResult {
  name: string;
  status: CheckStatus;
  /** The measured figure (a rate, a percentage, a count); null when there was nothing to measure. */
  value: number | null;
  detail: string;
}

export interface HealthRun {
  id: string;
  tenant_id: string;
  ran_at: Date;
  trigger: 'schedule' | 'run_now';
  verdict: CheckStatus;
  checks: CheckResult[];
}

export async function insertHealthRun(db: Queryable, run: Omit<HealthRun, 'id'>): Promise<HealthRun> {
  const [row] = await db<HealthRun[]>`
    insert into tenant_health_checks (tenant_id, ran_at, trigger, verdict, checks)
    values (${run.tenant_id}, ${run.ran_at}, ${run.trigger}, ${run.verdict}, ${db.json(run.checks as never)})
    returning id::text, tenant_id, ran_at, trigger, verdict, checks`;
  return row!;
}

/** A tenant's runs, newest first by ran_at. */
export async function listHealthRuns(db: Queryable, tenantId: string, limit: number): Promise<HealthRun[]> {
  return db<HealthRun[]>`
    select id::text, tenant_id, ran_at, trigger, verdict, checks from tenant_health_checks
    where tenant_id = ${tenantId} order by ran_at desc, id desc limit ${limit}`;
}

export async function latestHealthRun(db: Queryable, tenantId: string): Promise<HealthRun | undefined> {
  const [row] = await listHealthRuns(db, tenantId, 1);
  return row;
}

/** Tenants (not the platform's own) without a scheduled run since `since`: the daily worker's to-do list. */
export async function tenantsDueForHealthCheck(db: Queryable, since: Date, limit: number): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    select t.id from tenants t
    where not t.is_super_admin
      and not exists (select 1 from tenant_health_checks h where h.tenant_id = t.id and h.trigger = 'schedule' and h.ran_at >= ${since})
    order by t.id limit ${limit}`;
  return rows.map((r) => r.id);
}

export interface SendingDomainState {
  name: string;
  verified_at: Date | null;
  drifted_at: Date | null;
}

/** The tenant's current domains (not superseded by a newer claim). */
export async function sendingDomainStates(db: Queryable, tenantId: string): Promise<SendingDomainState[]> {
  return db<SendingDomainState[]>`
    select name, verified_at, drifted_at from domains where tenant_id = ${tenantId} and superseded_at is null order by name`;
}

/** Webhook deliveries of the tenant (inbound mail and event webhooks) dead-lettered since `since`. */
export async function deadLetteredSince(db: Queryable, tenantId: string, since: Date): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select (select count(*) from inbound_webhook_deliveries where tenant_id = ${tenantId} and status = 'dead' and dead_at >= ${since})
         + (select count(*) from event_webhook_deliveries where tenant_id = ${tenantId} and status = 'dead' and dead_at >= ${since}) as n`;
  return Number(row!.n);
}

/**
 * Claims the tenant's digest for the day: sets digest_last_posted_at to `at` unless it is already at or after
 * `dayStart` (posted today). True when claimed. `force` (run-now) claims regardless.
 */
export async function claimDigest(db: Queryable, tenantId: string, at: Date, dayStart: Date, force: boolean): Promise<boolean> {
  const rows = await db`
    update tenants set digest_last_posted_at = ${at}
    where id = ${tenantId} and (${force} or digest_last_posted_at is null or digest_last_posted_at < ${dayStart})
    returning id`;
  return rows.length > 0;
}

/** Tenants whose digest is due: not posted since `dayStart`, and with live sends since `activeSince` or a last health verdict other than pass. */
export async function tenantsDueForDigest(db: Queryable, dayStart: Date, activeSince: Date, limit: number): Promise<string[]> {
  const rows = await db<{ id: string }[]>`
    select t.id from tenants t
    where not t.is_super_admin
      and (t.digest_last_posted_at is null or t.digest_last_posted_at < ${dayStart})
      and (exists (select 1 from sends s where s.tenant_id = t.id and s.mode = 'live' and s.created_at >= ${activeSince})
           or (select h.verdict from tenant_health_checks h where h.tenant_id = t.id order by h.ran_at desc, h.id desc limit 1) in ('warn', 'fail'))
    order by t.id limit ${limit}`;
  return rows.map((r) => r.id);
}

/** The platform's health at a glance: each tenant's latest run counted by verdict (the observability overview). */
export async function healthCheckSummary(
  db: Queryable,
): Promise<{ tenants_checked: number; passing: number; warning: number; failing: number; last_run_at: Date | null }> {
  const [row] = await db<{ tenants_checked: number; passing: number; warning: number; failing: number; last_run_at: Date | null }[]>`
    with latest as (
      select distinct on (tenant_id) verdict, ran_at from tenant_health_checks order by tenant_id, ran_at desc, id desc
    )
    select count(*)::int as tenants_checked,
           count(*) filter (where verdict = 'pass')::int as passing,
           count(*) filter (where verdict = 'warn')::int as warning,
           count(*) filter (where verdict = 'fail')::int as failing,
           max(ran_at) as last_run_at
    from latest`;
  return row!;
}
