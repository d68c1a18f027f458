// SQL for segments: the saved definitions of a tenant, and counting or paging the contacts a compiled definition selects.
import type { Queryable, Sql } from '../../db/connection.js';
import type { CompiledSegment } from './compile.js';
import type { StoredGroup } from './definition.js';

export interface SegmentRow {
  id: string;
  tenant_id: string;
  name: string;
  definition: StoredGroup;
  created_at: Date;
  updated_at: Date;
}

const columns = (db: Queryable) => db`id, tenant_id, name, definition, created_at, updated_at`;

export async function insertSegment(db: Queryable, tenantId: string, segment: { name: string; definition: StoredGroup }, at: Date): Promise<SegmentRow> {
  const [row] = await db<SegmentRow[]>`
    insert into segments (tenant_id, name, definition, created_at, updated_at)
    values (${tenantId}, ${segment.name}, ${db.json(segment.definition as never)}, ${at}, ${at})
    returning ${columns(db)}`;
  return row!;
}

/** One segment of a tenant; `lock` holds it until the transaction ends so concurrent updates do not lose fields. */
export async function findSegment(db: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<SegmentRow | undefined> {
  const [row] = options.lock
    ? await db<SegmentRow[]>`select ${columns(db)} from segments where tenant_id = ${tenantId} and id = ${id} for update`
    : await db<SegmentRow[]>`select ${columns(db)} from segments where tenant_id = ${tenantId} and id = ${id}`;
  return row;
}

/** A page of a tenant's segments, newest first, after a (created_at, id) keyset position. */
export async function listSegments(
  db: Queryable,
  tenantId: string,
  page: { limit: number; after?: { at: Date; id: string } | undefined },
): Promise<SegmentRow[]> {
  const after = page.after;
  return db<SegmentRow[]>`
    select ${columns(db)} from segments
    where tenant_id = ${tenantId} ${after ? db`and (created_at, id) < (${after.at}, ${after.id})` : db``}
    order by created_at desc, id desc
    limit ${page.limit}`;
}

export async function countSegments(db: Queryable, tenantId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`select count(*)::int as n from segments where tenant_id = ${tenantId}`;
  return row!.n;
}

export async function updateSegment(
  db: Queryable,
  tenantId: string,
  id: string,
  segment: { name: string; definition: StoredGroup },
  at: Date,
): Promise<SegmentRow | undefined> {
  const [row] = await db<SegmentRow[]>`
    update segments set name = ${segment.name}, definition = ${db.json(segment.definition as never)}, updated_at = ${at}
    where tenant_id = ${tenantId} and id = ${id}
    returning ${columns(db)}`;
  return row;
}

export async function deleteSegment(db: Queryable, tenantId: string, id: string): Promise<SegmentRow | undefined> {
  const [row] = await db<SegmentRow[]>`delete from segments where tenant_id = ${tenantId} and id = ${id} returning ${columns(db)}`;
  return row;
}

/** Which of `ids` are lists of the tenant. */
export async function tenantListIds(db: Queryable, tenantId: string, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db<{ id: string }[]>`select id from lists where tenant_id = ${tenantId} and id = any(${db.array(ids)}::uuid[])`;
  return new Set(rows.map((r) => r.id));
}

/** work_mem of segment queries: room for the hash of a few hundred thousand addresses without spilling to disk. */
export const SCAN_WORK_MEM = '64MB';

/**
 * Runs a query over a compiled segment with settings for scanning a whole tenant: no JIT (compiling the
 * expressions of a large plan costs more than the scan it would speed up) and enough memory for the hash of
 * an engagement set. `set local`: inside the caller's transaction when given one, else in a short one.
 */
async function scanning<T>(db: Queryable, run: (tx: Queryable) => Promise<T>): Promise<T> {
  const withSettings = async (tx: Queryable) => {
    await tx`select set_config('jit', 'off', true), set_config('work_mem', ${SCAN_WORK_MEM}, true)`;
    return run(tx);
  };
  return 'savepoint' in db ? withSettings(db) : ((db as Sql).begin(withSettings) as Promise<T>);
}

/** How many contacts a compiled condition (compile.ts) selects. */
export async function countMatching(db: Queryable, segment: CompiledSegment): Promise<number> {
  return scanning(db, async (tx) => {
    const [row] = await tx<{ n: string }[]>`select count(*) as n from contacts c ${segment.joins} where ${segment.where}`;
    return Number(row!.n);
  });
}

export interface MatchingContact {
  id: string;
  email: string;
  created_at: Date;
}

/**
 * A page of the contacts a compiled condition selects, newest first by (created_at, id) — the order of
 * contacts_tenant_created_idx — after a keyset position. Contacts created while pages are read sort before
 * the first page and are not picked up, so a walk through the pages is a stable set.
 */
export async function pageMatching(
  db: Queryable,
  segment: CompiledSegment,
  page: { limit: number; after?: { at: Date; id: string } | undefined },
): Promise<MatchingContact[]> {
  const after = page.after;
  return scanning(
    db,
    (tx) => tx<MatchingContact[]>`
    select c.id, c.email, c.created_at from contacts c ${segment.joins}
    where ${segment.where} ${after ? tx`and (c.created_at, c.id) < (${after.at}, ${after.id}::uuid)` : tx``}
    order by c.created_at desc, c.id desc
    limit ${page.limit}`,
  );
}
