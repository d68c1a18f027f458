// SQL of the warm-up schedule: the tenant's plan and its 30 rows, row edits, the dispatch claim, and the contacts a dispatch sends to.
import type { Queryable } from '../../db/connection.js';

export interface PlanRow {
  tenant_id: string;
  strategy: string;
  field_set: 'formal' | 'narrative';
  total_target_recipients: number;
  start_date: string;
  domain_id: string | null;
  generated_at: Date;
}

export interface ScheduleRow {
  day_offset: number;
  daily_target_recipients: number;
  template_slug: string | null;
  notes: string | null;
  send_status: string;
  dispatched_at: Date | null;
  dispatch_result: Record<string, unknown> | null;
  updated_at: Date;
}

const ROW_COLUMNS = 'day_offset, daily_target_recipients, template_slug, notes, send_status, dispatched_at, dispatch_result, updated_at';

/** Replaces the tenant's plan and all 30 rows (rows of the old plan go with it). */
export async function replacePlan(tx: Queryable, plan: Omit<PlanRow, 'generated_at'> & { at: Date }, targets: number[]): Promise<void> {
  await tx`delete from warmup_schedule_plans where tenant_id = ${plan.tenant_id}`;
  await tx`
    insert into warmup_schedule_plans (tenant_id, strategy, field_set, total_target_recipients, start_date, domain_id, generated_at)
    values (${plan.tenant_id}, ${plan.strategy}, ${plan.field_set}, ${plan.total_target_recipients}, ${plan.start_date}, ${plan.domain_id}, ${plan.at})`;
  await tx`
    insert into warmup_schedule_rows (tenant_id, day_offset, daily_target_recipients, updated_at)
    select ${plan.tenant_id}, o - 1, t, ${plan.at} from unnest(${targets}::int[]) with ordinality as r(t, o)`;
}

export async function planOf(db: Queryable, tenantId: string): Promise<PlanRow | undefined> {
  const [row] = await db<PlanRow[]>`
    select tenant_id, strategy, field_set, total_target_recipients, to_char(start_date, 'YYYY-MM-DD') as start_date, domain_id, generated_at
    from warmup_schedule_plans where tenant_id = ${tenantId}`;
  return row;
}

export async function scheduleRows(db: Queryable, tenantId: string): Promise<ScheduleRow[]> {
  return db<ScheduleRow[]>`select ${db.unsafe(ROW_COLUMNS)} from warmup_schedule_rows where tenant_id = ${tenantId} order by day_offset`;
}

export interface RowPatch {
  daily_target_recipients?: number | undefined;
  template_slug?: string | null | undefined;
  notes?: string | null | undefined;
  send_status?: string | undefined;
}

/** Changes only the fields present in `patch`; undefined when the tenant has no such row. */
export async function patchRow(db: Queryable, tenantId: string, dayOffset: number, patch: RowPatch, at: Date): Promise<ScheduleRow | undefined> {
  const has = (k: keyof RowPatch) => Object.hasOwn(patch, k) && patch[k] !== undefined;
  const [row] = await db<ScheduleRow[]>`
    update warmup_schedule_rows set
      daily_target_recipients = ${has('daily_target_recipients') ? patch.daily_target_recipients! : db`daily_target_recipients`},
      template_slug = ${has('template_slug') ? patch.template_slug! : db`template_slug`},
      notes = ${has('notes') ? patch.notes! : db`notes`},
      send_status = ${has('send_status') ? patch.send_status! : db`send_status`},
      updated_at = ${at}
    where tenant_id = ${tenantId} and day_offset = ${dayOffset}
    returning ${db.unsafe(ROW_COLUMNS)}`;
  return row;
}

/**
 * Claims a row for dispatch: only one caller wins, and never for a sent row (terminal). A claim left
 * by a crashed dispatch (dispatching since before `staleBefore`) may be taken over.
 */
export async function claimRow(db: Queryable, tenantId: string, dayOffset: number, at: Date, staleBefore: Date): Promise<ScheduleRow | undefined> {
  const [row] = await db<ScheduleRow[]>`
    update warmup_schedule_rows set send_status = 'dispatching', dispatched_at = ${at}, updated_at = ${at}
    where tenant_id = ${tenantId} and day_offset = ${dayOffset}
      and (send_status not in ('sent', 'dispatching') or (send_status = 'dispatching' and dispatched_at < ${staleBefore}))
    returning ${db.unsafe(ROW_COLUMNS)}`;
  return row;
}

export async function finishRow(
  db: Queryable,
  tenantId: string,
  dayOffset: number,
  status: 'sent' | 'failed',
  result: Record<string, unknown>,
  at: Date,
): Promise<ScheduleRow> {
  const [row] = await db<ScheduleRow[]>`
    update warmup_schedule_rows set send_status = ${status}, dispatch_result = ${db.json(result as never)}, updated_at = ${at}
    where tenant_id = ${tenantId} and day_offset = ${dayOffset}
    returning ${db.unsafe(ROW_COLUMNS)}`;
  return row!;
}

/**
 * The tenant's most engaged active contacts: most opens and clicks in the 90 days before `at`, then
 * oldest first (a long-standing contact is the safer bet for a new domain).
 */
export async function mostEngagedContacts(
  db: Queryable,
  tenantId: string,
  limit: number,
  at: Date,
): Promise<{ id: string; email: string; first_name: string | null; last_name: string | null }[]> {
  if (limit <= 0) return [];
  return db<{ id: string; email: string; first_name: string | null; last_name: string | null }[]>`
    select c.id, c.email, c.first_name, c.last_name
    from contacts c
    left join lateral (
      select count(*)::int as n from events e
      where e.tenant_id = ${tenantId} and e.recipient = c.email and e.type in ('open', 'click') and e.occurred_at >= ${new Date(at.getTime() - 90 * 86_400_000)}
    ) eng on true
    where c.tenant_id = ${tenantId} and c.status = 'active' and c.email is not null
    order by eng.n desc, c.created_at, c.id
    limit ${limit}`;
}

/** The template a row names: by id, or by name (the newest of that name). */
export async function templateIdBySlug(db: Queryable, tenantId: string, slug: string): Promise<string | undefined> {
  const [row] = await db<{ id: string }[]>`
    select id from templates
    where tenant_id = ${tenantId} and (id::text = ${slug} or lower(name) = lower(${slug}))
    order by (id::text = ${slug}) desc, created_at desc limit 1`;
  return row?.id;
}

/** The domain a dispatch sends from: the plan's, else the tenant's oldest verified domain. */
export async function dispatchDomain(db: Queryable, tenantId: string, domainId: string | null): Promise<{ id: string; name: string } | undefined> {
  const [row] = await db<{ id: string; name: string }[]>`
    select id, name from domains
    where tenant_id = ${tenantId} and verified_at is not null ${domainId ? db`and id = ${domainId}` : db``}
    order by created_at, id limit 1`;
  return row;
}
