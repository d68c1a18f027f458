// SQL of goals and goal conversions: a tenant's goals (CRUD), the goals of the tenants whose clicks a batch records, the conversions written with them, and
// a campaign's conversion totals.
import type { Queryable } from '../../db/connection.js';
import type { GoalRule } from './rules.js';

export interface GoalRow extends GoalRule {
  id: string;
  tenant_id: string;
  name: string;
  created_at: Date;
  updated_at: Date;
}

export type GoalContent = GoalRule & { name: string };

/** The unique index on (tenant_id, lower(name)). */
export const GOAL_NAME_KEY = 'goals_tenant_name_key';

// revenue_cents is a bigint (postgres.js would hand it over as a string); float8 holds it exactly up to 2^53.
const columns = (db: Queryable) =>
  db`id, tenant_id, name, match_type, match_value, revenue_cents::float8 as revenue_cents, revenue_param, created_at, updated_at`;

export async function insertGoal(db: Queryable, tenantId: string, c: GoalContent, at: Date): Promise<GoalRow> {
  const [row] = await db<GoalRow[]>`
    insert into goals (tenant_id, name, match_type, match_value, revenue_cents, revenue_param, created_at, updated_at)
    values (${tenantId}, ${c.name}, ${c.match_type}, ${c.match_value}, ${c.revenue_cents}, ${c.revenue_param}, ${at}, ${at})
    returning ${columns(db)}`;
  return row!;
}

export async function findGoal(db: Queryable, tenantId: string, id: string, lock = false): Promise<GoalRow | undefined> {
  const [row] = await db<GoalRow[]>`select ${columns(db)} from goals where tenant_id = ${tenantId} and id = ${id} ${lock ? db`for update` : db``}`;
  return row;
}

/** A page of a tenant's goals, newest first, after a (created_at, id) keyset position. */
export async function listGoals(db: Queryable, tenantId: string, page: { limit: number; after?: { at: Date; id: string } | undefined }): Promise<GoalRow[]> {
  const after = page.after;
  return db<GoalRow[]>`
    select ${columns(db)} from goals
    where tenant_id = ${tenantId} ${after ? db`and (created_at, id) < (${after.at}, ${after.id})` : db``}
    order by created_at desc, id desc
    limit ${page.limit}`;
}

export async function countGoals(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from goals where tenant_id = ${tenantId}`;
  return row!.n;
}

export async function updateGoal(db: Queryable, tenantId: string, id: string, c: GoalContent, at: Date): Promise<GoalRow | undefined> {
  const [row] = await db<GoalRow[]>`
    update goals set name = ${c.name}, match_type = ${c.match_type}, match_value = ${c.match_value},
      revenue_cents = ${c.revenue_cents}, revenue_param = ${c.revenue_param}, updated_at = ${at}
    where tenant_id = ${tenantId} and id = ${id}
    returning ${columns(db)}`;
  return row;
}

/** Deletes the goal; its conversions stay, with goal_id null (on delete set null) and the name they were recorded under. */
export async function deleteGoal(db: Queryable, tenantId: string, id: string): Promise<GoalRow | undefined> {
  const [row] = await db<GoalRow[]>`delete from goals where tenant_id = ${tenantId} and id = ${id} returning ${columns(db)}`;
  return row;
}

/** Every goal of the tenants these sends belong to (what a hit batch, which knows only its sends, matches clicks against). */
export async function goalsOfSendTenants(db: Queryable, sendIds: readonly string[]): Promise<GoalRow[]> {
  if (sendIds.length === 0) return [];
  return db<GoalRow[]>`select ${columns(db)} from goals where tenant_id in (select tenant_id from sends where id = any(${sendIds}::uuid[]))`;
}

export interface ConversionInsert {
  tenant_id: string;
  event_id: string;
  goal_id: string;
  goal_name: string;
  campaign_id: string | null;
  contact_id: string | null;
  send_id: string;
  revenue_cents: number;
  occurred_at: Date;
}

/**
 * Writes conversions; a batch committed again after a lost reply writes none twice (unique (event_id, goal_id)),
 * and a goal deleted meanwhile writes none (its key no longer exists).
 */
export async function insertConversions(db: Queryable, rows: readonly ConversionInsert[]): Promise<void> {
  if (rows.length === 0) return;
  await db`
    insert into goal_conversions (tenant_id, event_id, goal_id, goal_name, campaign_id, contact_id, send_id, revenue_cents, occurred_at)
    select v.tenant_id, v.event_id, v.goal_id, v.goal_name, v.campaign_id, v.contact_id, v.send_id, v.revenue_cents, v.occurred_at
    from jsonb_to_recordset(${db.json(rows as never)}) as v(tenant_id uuid, event_id uuid, goal_id uuid, goal_name text, campaign_id uuid,
      contact_id uuid, send_id uuid, revenue_cents bigint, occurred_at timestamptz)
    where exists (select 1 from goals g where g.id = v.goal_id)
    on conflict (event_id, goal_id) do nothing`;
}

/** How a goal deleted after its clicks is named in conversion totals. */
export const DELETED_GOAL = '(deleted goal)';

export interface GoalTotals {
  goal_id: string | null;
  goal_name: string;
  conversions: number;
  unique_converters: number;
  revenue_cents: number;
}

/**
 * A campaign's conversions per goal (a deleted goal's together under goal_id null), and over all goals: clicks
 * a link scanner made (events.detail.scanner, which can be set after the click) are left out.
 */
export async function campaignConversionTotals(
  db: Queryable,
  tenantId: string,
  campaignId: string,
): Promise<{ all: Omit<GoalTotals, 'goal_id' | 'goal_name'>; byGoal: GoalTotals[] }> {
  const rows = await db<(GoalTotals & { overall: boolean })[]>`
    with human as (
      select c.goal_id, c.goal_name, c.revenue_cents, coalesce(c.contact_id, c.send_id) as converter
      from goal_conversions c join events e on e.id = c.event_id
      where c.tenant_id = ${tenantId} and c.campaign_id = ${campaignId}
        and not coalesce((e.detail ->> 'scanner')::boolean, false)
    ), per_goal as (
      select goal_id, count(*) as conversions, count(distinct converter) as unique_converters, coalesce(sum(revenue_cents), 0) as revenue_cents
      from human group by goal_id
    )
    select false as overall, p.goal_id, coalesce(g.name, ${DELETED_GOAL}) as goal_name,
      p.conversions::float8 as conversions, p.unique_converters::float8 as unique_converters, p.revenue_cents::float8 as revenue_cents
    from per_goal p left join goals g on g.id = p.goal_id
    union all
    select true, null, '', count(*)::float8, count(distinct converter)::float8, coalesce(sum(revenue_cents), 0)::float8 from human`;
  const all = rows.find((r) => r.overall)!;
  return {
    all: { conversions: all.conversions, unique_converters: all.unique_converters, revenue_cents: all.revenue_cents },
    byGoal: rows.filter((r) => !r.overall).map(({ overall: _o, ...r }) => r),
  };
}
