// SQL for tenants' static contact lists (the list rows themselves; membership is in member-queries.ts). Every query is scoped to its tenant.
import type { Queryable } from '../../db/connection.js';

export interface ListRow {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  /** Exact: kept by the list_members statement triggers (migration 021), never counted per request. */
  member_count: number;
  created_at: Date;
  updated_at: Date;
}

/** What create writes and update rewrites. */
export interface ListContent {
  name: string;
  description: string | null;
}

/** Name of the unique index on (tenant_id, lower(name)): a duplicate name violates it. */
export const LIST_NAME_KEY = 'lists_tenant_name_key';

// member_count is a bigint (postgres.js would hand it over as a string); a float8 holds any count exactly up to 2^53.
const columns = (db: Queryable) => db`id, tenant_id, name, description, member_count::float8 as member_count, created_at, updated_at`;

export async function insertList(db: Queryable, tenantId: string, c: ListContent, at: Date): Promise<ListRow> {
  const [row] = await db<ListRow[]>`
    insert into lists (tenant_id, name, description, created_at, updated_at)
    values (${tenantId}, ${c.name}, ${c.description}, ${at}, ${at})
    returning ${columns(db)}`;
  return row!;
}

/**
 * One list of a tenant. `lock: 'update'` holds it against concurrent changes of its fields (PATCH);
 * `lock: 'key share'` only keeps it from being deleted until the transaction ends, without blocking the
 * member_count updates of concurrent membership changes (they take a weaker lock than a delete).
 */
export async function findList(db: Queryable, tenantId: string, id: string, options: { lock?: 'update' | 'key share' } = {}): Promise<ListRow | undefined> {
  const lock = options.lock === 'update' ? db`for update` : options.lock === 'key share' ? db`for key share` : db``;
  const [row] = await db<ListRow[]>`select ${columns(db)} from lists where tenant_id = ${tenantId} and id = ${id} ${lock}`;
  return row;
}

/** A page of a tenant's lists, newest first, after a (created_at, id) keyset position. */
export async function listLists(db: Queryable, tenantId: string, page: { limit: number; after?: { at: Date; id: string } | undefined }): Promise<ListRow[]> {
  const after = page.after;
  return db<ListRow[]>`
    select ${columns(db)} from lists
    where tenant_id = ${tenantId}
      ${after ? db`and (created_at, id) < (${after.at}, ${after.id})` : db``}
    order by created_at desc, id desc
    limit ${page.limit}`;
}

export async function countLists(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from lists where tenant_id = ${tenantId}`;
  return row!.n;
}

export async function updateList(db: Queryable, tenantId: string, id: string, c: ListContent, at: Date): Promise<ListRow | undefined> {
  const [row] = await db<ListRow[]>`
    update lists set name = ${c.name}, description = ${c.description}, updated_at = ${at}
    where tenant_id = ${tenantId} and id = ${id}
    returning ${columns(db)}`;
  return row;
}

/** Deletes the list; its list_members rows go with it (on delete cascade), the contacts stay. */
export async function deleteList(db: Queryable, tenantId: string, id: string): Promise<ListRow | undefined> {
  const [row] = await db<ListRow[]>`delete from lists where tenant_id = ${tenantId} and id = ${id} returning ${columns(db)}`;
  return row;
}
