// Saved audit filters: a user's named audit page states, at most 4 KB each and 50 per user; only their owner deletes them.
import type { Clock } from '../../kernel/clock.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { canonicalJson } from './chain.js';
import { AppError, notFound, validationError } from '../../kernel/errors.js';

/** The spec's Limits: bytes per saved filter (name and definition as JSON) and filters per user. */
export const FILTER_MAX_BYTES = 4096;
export const FILTERS_PER_USER = 50;

export interface FilterDefinition {
  q?: string | undefined;
  range?: string | undefined;
  event_type?: string | undefined;
  actor?: string | undefined;
  date_from?: string | undefined;
  date_to?: string | undefined;
}

export interface AuditFilter {
  id: string;
  tenant_id: string;
  user_id: string;
  name: string;
  definition: FilterDefinition;
  created_at: Date;
}

export async function listFilters(db: Queryable, tenantId: string, userId: string): Promise<AuditFilter[]> {
  return db<AuditFilter[]>`
    select * from audit_filters where tenant_id = ${tenantId} and user_id = ${userId} order by created_at desc, id`;
}

/** The row's size as the limit counts it: the name and the definition as JSON, in UTF-8 bytes. */
export const filterBytes = (name: string, definition: FilterDefinition) => Buffer.byteLength(name) + Buffer.byteLength(canonicalJson(definition));

/** Saves a filter: 422 over 4 KB or past 50 per user (the count checked under a lock on the user, so racing saves cannot pass 50). */
export async function createFilter(
  sql: Sql,
  clock: Clock,
  who: { tenantId: string; userId: string },
  name: string,
  definition: FilterDefinition,
): Promise<AuditFilter> {
  const bytes = filterBytes(name, definition);
  if (bytes > FILTER_MAX_BYTES)
    throw validationError('definition', `a saved filter is at most ${FILTER_MAX_BYTES} bytes (name and definition as JSON); this one is ${bytes}`);
  return sql.begin(async (tx) => {
    await tx`select 1 from users where id = ${who.userId} for update`;
    const [count] = await tx<{ n: number }[]>`select count(*)::int as n from audit_filters where user_id = ${who.userId}`;
    if (count!.n >= FILTERS_PER_USER) throw new AppError('validation_error', `at most ${FILTERS_PER_USER} saved audit filters per user; delete one first`);
    const [row] = await tx<AuditFilter[]>`
      insert into audit_filters (tenant_id, user_id, name, definition, created_at)
      values (${who.tenantId}, ${who.userId}, ${name}, ${tx.json(definition as never)}, ${clock.now()})
      returning *`;
    return row!;
  });
}

/** Deletes the caller's own filter: another tenant's is 404, a teammate's is 403 (only the row's owner deletes it). */
export async function deleteFilter(db: Queryable, who: { tenantId: string; userId: string }, id: string): Promise<void> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) throw notFound('audit filter');
  const [row] = await db<{ user_id: string }[]>`select user_id from audit_filters where id = ${id} and tenant_id = ${who.tenantId}`;
  if (!row) throw notFound('audit filter');
  if (row.user_id !== who.userId) throw new AppError('forbidden', 'only the user who saved an audit filter may delete it');
  await db`delete from audit_filters where id = ${id} and user_id = ${who.userId}`;
}
