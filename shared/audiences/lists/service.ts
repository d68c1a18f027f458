// Tenant operations on static contact lists: create, list, read, rename or describe, delete (membership is in members.ts).
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import { decodeCursor, pageOf } from '../../kernel/cursor.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { conflict, isUniqueViolation, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { countLists, deleteList, findList, insertList, LIST_NAME_KEY, listLists, updateList, type ListContent, type ListRow } from './queries.js';

export interface ListDeps {
  sql: Sql;
  clock: Clock;
}

export const MAX_NAME_LENGTH = 200;
export const MAX_DESCRIPTION_LENGTH = 1000;

/** A PATCH: absent fields keep their value; a null or empty description removes it. */
export type ListChanges = Partial<{ name: string; description: string | null }>;
export type NewList = { name: string; description?: string | null | undefined };

const duplicateName = (name: string) => conflict(`a list named "${name}" already exists (names are compared without case)`);

/** Names are shown in lists and pickers: one line of printable text. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

function checkName(input: string): string {
  const name = input.trim();
  if (!name) throw validationError('name', 'must not be blank');
  if (name.length > MAX_NAME_LENGTH) throw validationError('name', `must be at most ${MAX_NAME_LENGTH} characters once surrounding spaces are dropped`);
  if (CONTROL.test(name)) throw validationError('name', 'must not contain line breaks or control characters');
  return name;
}

function checkDescription(input: string | null): string | null {
  const description = input?.trim() || null;
  if (description !== null && description.length > MAX_DESCRIPTION_LENGTH) {
    throw validationError('description', `must be at most ${MAX_DESCRIPTION_LENGTH} characters`);
  }
  return description;
}

/**
 * A tenant's list or 404 (malformed ids and other tenants' lists alike). `lock: 'key share'` keeps it from being
 * deleted until the transaction ends (membership changes); `lock: 'update'` also from being changed (PATCH).
 */
export async function requireList(db: Queryable, tenantId: string, id: string, options: { lock?: 'update' | 'key share' } = {}): Promise<ListRow> {
  const row = isUuid(id) ? await findList(db, tenantId, id, options) : undefined;
  if (!row) throw notFound('list');
  return row;
}

export async function createList(deps: ListDeps, tenantId: string, actor: AuditActor, input: NewList): Promise<ListRow> {
  const content: ListContent = { name: checkName(input.name), description: checkDescription(input.description ?? null) };
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      const row = await insertList(tx, tenantId, content, at);
      await writeAudit(tx, { tenantId, actor, action: 'list.created', resourceType: 'list', resourceId: row.id, metadata: { name: row.name }, at });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, LIST_NAME_KEY)) throw duplicateName(content.name);
    throw err;
  }
}

export async function getList(db: Queryable, tenantId: string, id: string): Promise<ListRow> {
  return requireList(db, tenantId, id);
}

/** A page of the tenant's lists, newest first; total counts them all. */
export async function listListPage(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after?: string | undefined },
): Promise<{ items: ListRow[]; next_cursor: string | null; total: number }> {
  const after = page.after ? decodeCursor(page.after) : undefined;
  const rows = await listLists(db, tenantId, { limit: page.limit + 1, after });
  return { ...pageOf(rows, page.limit), total: await countLists(db, tenantId) };
}

/** Renames the list or changes its description; fields not given keep their value. */
export async function changeList(deps: ListDeps, tenantId: string, actor: AuditActor, id: string, changes: ListChanges): Promise<ListRow> {
  if (!isUuid(id)) throw notFound('list');
  const checked: ListChanges = {};
  if (changes.name !== undefined) checked.name = checkName(changes.name);
  if (changes.description !== undefined) checked.description = checkDescription(changes.description);
  const fields = Object.keys(checked) as (keyof ListChanges)[];
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      // Locked: a concurrent PATCH of the other field must not be overwritten with the value read here.
      const current = await requireList(tx, tenantId, id, { lock: 'update' });
      if (fields.length === 0) return current;
      const content: ListContent = {
        name: checked.name ?? current.name,
        description: checked.description !== undefined ? checked.description : current.description,
      };
      const row = (await updateList(tx, tenantId, id, content, at))!;
      await writeAudit(tx, { tenantId, actor, action: 'list.updated', resourceType: 'list', resourceId: id, metadata: { name: row.name, fields }, at });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, LIST_NAME_KEY)) throw duplicateName(checked.name ?? '');
    throw err;
  }
}

/** Deletes the list and its memberships; the contacts stay. Its name may be used again. */
export async function removeList(deps: ListDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('list');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const row = await deleteList(tx, tenantId, id);
    if (!row) throw notFound('list');
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'list.deleted',
      resourceType: 'list',
      resourceId: id,
      metadata: { name: row.name, member_count: row.member_count },
      at,
    });
  });
}
