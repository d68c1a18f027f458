// SQL for MD5 suppression lists: the lists of a tenant, their entries (16-byte MD5 of a lower-cased address), and the look-up the campaign send uses.
import type { Queryable } from '../../db/connection.js';
import type { KeysetPosition } from '../../kernel/cursor.js';

export interface Md5ListRow {
  id: string;
  tenant_id: string;
  name: string;
  entry_count: number;
  created_at: Date;
  updated_at: Date;
}

const columns = (db: Queryable) => db`id, tenant_id, name, entry_count::float8 as entry_count, created_at, updated_at`;

export async function insertMd5List(db: Queryable, tenantId: string, name: string, at: Date): Promise<Md5ListRow> {
  const [row] = await db<Md5ListRow[]>`
    insert into md5_lists (tenant_id, name, created_at, updated_at) values (${tenantId}, ${name}, ${at}, ${at}) returning ${columns(db)}`;
  return row!;
}

export async function findMd5List(db: Queryable, tenantId: string, id: string): Promise<Md5ListRow | undefined> {
  const [row] = await db<Md5ListRow[]>`select ${columns(db)} from md5_lists where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

export async function listMd5Lists(db: Queryable, tenantId: string, page: { limit: number; after?: KeysetPosition | undefined }): Promise<Md5ListRow[]> {
  const after = page.after ? db`and (created_at, id) < (${page.after.at}, ${page.after.id})` : db``;
  return db<Md5ListRow[]>`
    select ${columns(db)} from md5_lists where tenant_id = ${tenantId} ${after} order by created_at desc, id desc limit ${page.limit}`;
}

export async function countMd5Lists(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::float8 as n from md5_lists where tenant_id = ${tenantId}`;
  return row!.n;
}

/** Deletes the list and its entries (by cascade). */
export async function deleteMd5List(db: Queryable, tenantId: string, id: string): Promise<boolean> {
  const rows = await db`delete from md5_lists where tenant_id = ${tenantId} and id = ${id} returning id`;
  return rows.length > 0;
}

/**
 * Adds hashes (32 lower-case hex digits each, stored as 16 bytes) to a list; repeats, within the call or already
 * stored, are ignored. Returns how many were new.
 */
export async function addMd5Entries(db: Queryable, listId: string, hexHashes: readonly string[], at: Date): Promise<number> {
  if (hexHashes.length === 0) return 0;
  const [row] = await db<{ n: number }[]>`
    with added as (
      insert into md5_list_entries (list_id, hash) select ${listId}, decode(h, 'hex') from unnest(${hexHashes as string[]}::text[]) as h
      on conflict (list_id, hash) do nothing returning 1
    )
    select count(*)::int as n from added`;
  const added = row!.n;
  if (added > 0) await db`update md5_lists set updated_at = ${at} where id = ${listId}`;
  return added;
}

/**
 * Which of these normalized addresses the tenant's MD5 list holds (md5 of the lower-cased address), in one query.
 * A list that is not the tenant's holds none.
 */
export async function listedAddresses(db: Queryable, tenantId: string, listId: string, emails: readonly string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const rows = await db<{ email: string }[]>`
    select q.email from unnest(${emails as string[]}::text[]) as q(email)
    join md5_lists l on l.id = ${listId} and l.tenant_id = ${tenantId}
    join md5_list_entries e on e.list_id = l.id and e.hash = decode(md5(lower(q.email)), 'hex')`;
  return new Set(rows.map((r) => r.email));
}
