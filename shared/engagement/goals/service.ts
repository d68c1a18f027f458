// Tenant operations on goals: create, list, read, change, delete (a goal's conversions outlive it, with goal_id null).
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { conflict, isUniqueViolation, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { countGoals, deleteGoal, findGoal, GOAL_NAME_KEY, insertGoal, listGoals, updateGoal, type GoalContent, type GoalRow } from './queries.js';
import { checkRule, type MatchType } from './rules.js';

export interface GoalDeps {
  sql: Sql;
  clock: Clock;
}

export const MAX_NAME_LENGTH = 200;

export interface GoalInput {
  name: string;
  match_type: MatchType;
  match_value: string;
  revenue_cents?: number | null | undefined;
  revenue_param?: string | null | undefined;
}
/** A PATCH: absent fields keep their value; null clears a revenue field. */
export type GoalChanges = Partial<GoalInput>;

const CONTROL = /[\p{Cc}\u2028\u2029]/u;

function checkName(input: string): string {
  const name = input.trim();
  if (!name) throw validationError('name', 'must not be blank');
  if (name.length > MAX_NAME_LENGTH) throw validationError('name', `must be at most ${MAX_NAME_LENGTH} characters once surrounding spaces are dropped`);
  if (CONTROL.test(name)) throw validationError('name', 'must not contain line breaks or control characters');
  return name;
}

function contentOf(input: GoalInput): GoalContent {
  const content: GoalContent = {
    name: checkName(input.name),
    match_type: input.match_type,
    match_value: input.match_value,
    revenue_cents: input.revenue_cents ?? null,
    revenue_param: input.revenue_param ?? null,
  };
  checkRule(content);
  return content;
}

const duplicateName = (name: string) => conflict(`a goal named "${name}" already exists (names are compared without case)`);

/** A tenant's goal or 404 (malformed ids and other tenants' goals alike). */
export async function requireGoal(db: Queryable, tenantId: string, id: string, lock = false): Promise<GoalRow> {
  const row = isUuid(id) ? await findGoal(db, tenantId, id, lock) : undefined;
  if (!row) throw notFound('goal');
  return row;
}

async function named<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isUniqueViolation(err, GOAL_NAME_KEY)) throw duplicateName(name);
    throw err;
  }
}

export async function createGoal(deps: GoalDeps, tenantId: string, actor: AuditActor, input: GoalInput): Promise<GoalRow> {
  const content = contentOf(input);
  const at = deps.clock.now();
  return named(content.name, () =>
    deps.sql.begin(async (tx) => {
      const row = await insertGoal(tx, tenantId, content, at);
      await writeAudit(tx, { tenantId, actor, action: 'goal.created', resourceType: 'goal', resourceId: row.id, metadata: { name: row.name }, at });
      return row;
    }),
  );
}

export async function getGoal(db: Queryable, tenantId: string, id: string): Promise<GoalRow> {
  return requireGoal(db, tenantId, id);
}

export async function listGoalPage(db: Queryable, tenantId: string, page: { limit: number; after?: string | undefined }) {
  const after = page.after ? decodeCursor(page.after) : undefined;
  const rows = await listGoals(db, tenantId, { limit: page.limit + 1, after });
  return { ...pageOf(rows, page.limit), total: await countGoals(db, tenantId) };
}

/** Changes the goal for clicks from now on; conversions already recorded keep their revenue. */
export async function changeGoal(deps: GoalDeps, tenantId: string, actor: AuditActor, id: string, changes: GoalChanges): Promise<GoalRow> {
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const current = await requireGoal(tx, tenantId, id, true);
    const content = contentOf({
      name: changes.name ?? current.name,
      match_type: changes.match_type ?? current.match_type,
      match_value: changes.match_value ?? current.match_value,
      revenue_cents: changes.revenue_cents === undefined ? current.revenue_cents : changes.revenue_cents,
      revenue_param: changes.revenue_param === undefined ? current.revenue_param : changes.revenue_param,
    });
    const row = await named(content.name, async () => (await updateGoal(tx, tenantId, id, content, at))!);
    await writeAudit(tx, { tenantId, actor, action: 'goal.updated', resourceType: 'goal', resourceId: id, metadata: { name: row.name }, at });
    return row;
  });
}

export async function removeGoal(deps: GoalDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const row = isUuid(id) ? await deleteGoal(tx, tenantId, id) : undefined;
    if (!row) throw notFound('goal');
    await writeAudit(tx, { tenantId, actor, action: 'goal.deleted', resourceType: 'goal', resourceId: id, metadata: { name: row.name }, at });
  });
}
