// SQL writing one batch of imported rows: a multi-row upsert of contacts per row shape, list memberships, and which addresses already have a live contact.
import type { ProfileColumn } from '../contacts/fields.js';
import { PROFILE_COLUMN_NAMES } from '../contacts/fields.js';
import type { Queryable } from '../../db/connection.js';
import type { OnExisting } from './options.js';
import type { ImportWrite } from './rows.js';

export interface UpsertCounts {
  inserted: number;
  updated: number;
  skipped: number;
}

/** What a group of rows gives: the same profile columns and custom-field keys in every row (one statement per shape). */
export interface RowShape {
  profile: ProfileColumn[];
  customKeys: string[];
}

export function shapeOf(row: ImportWrite): RowShape {
  return { profile: (Object.keys(row.profile) as ProfileColumn[]).sort(), customKeys: [...row.customKeys].sort() };
}

export const shapeKey = (s: RowShape) => `${s.profile.join(',')}|${s.customKeys.join(',')}`;

/** Fragments joined with commas (postgres.js fragments nest; their types do not compose, hence the casts). */
const list = (db: Queryable, parts: unknown[]): never => parts.reduce((all, next) => db`${all as never}, ${next as never}`) as never;

/**
 * Upserts rows of one shape and distinct addresses in one statement: insert … on conflict (tenant_id, email_hash)
 * do update. The same rules as the contacts API's upsert:
 * - a new address is inserted (status given or active);
 * - a deleted or erased contact is made anew in its row (profile, custom fields and status as given, created_at
 *   now): counted inserted, whatever on_existing says;
 * - a live contact, with on_existing update: the columns given change, custom fields given are set (an empty value
 *   removes one), others stay; with skip it is left as it was (counted skipped).
 * An import never re-subscribes: status unsubscribed unsubscribes a contact, active leaves an unsubscribed one as it is
 * (the batch reports such rows as invalid before they get here: see writeBatch).
 */
export async function upsertRows(
  db: Queryable,
  tenantId: string,
  shape: RowShape,
  rows: readonly ImportWrite[],
  options: { onExisting: OnExisting; at: Date },
): Promise<UpsertCounts> {
  if (rows.length === 0) return { inserted: 0, updated: 0, skipped: 0 };
  const at = options.at;
  const given = new Set(shape.profile);
  const arrays = [
    db`${rows.map((r) => r.email)}::text[]`,
    db`${rows.map((r) => r.status)}::text[]`,
    db`${rows.map((r) => JSON.stringify(r.set))}::text[]`,
    ...shape.profile.map((column) => db`${rows.map((r) => r.profile[column] ?? null)}::text[]`),
  ];
  const names = [db`email`, db`status`, db`cf`, ...shape.profile.map((column) => db(`p_${column}`))];
  const profileColumns = PROFILE_COLUMN_NAMES.map((column) => db(column));
  const profileInserts = PROFILE_COLUMN_NAMES.map((column) => (given.has(column) ? db`i.${db(`p_${column}`)}` : db`null::text`));
  const profileUpdates = PROFILE_COLUMN_NAMES.map((column) =>
    given.has(column) ? db`${db(column)} = excluded.${db(column)}` : db`${db(column)} = case when c.status = 'deleted' then null else c.${db(column)} end`,
  );
  const newStatus = db`(case when c.status = 'deleted' then excluded.status when excluded.status = 'unsubscribed' then 'unsubscribed' else c.status end)`;
  const [counts] = await db<{ inserted: number; updated: number; returned: number }[]>`
    with input as (
      select * from unnest(${list(db, arrays)}) with ordinality as i(${list(db, names)}, ord)
    ),
    prior as (
      select c.email_hash, c.status from contacts c
      where c.tenant_id = ${tenantId} and c.email_hash in (select sha256(convert_to(i.email, 'UTF8')) from input i)
    ),
    written as (
      insert into contacts as c (tenant_id, email, email_hash, ${list(db, profileColumns)}, status, custom_fields, unsubscribed_at, created_at, updated_at)
      select ${tenantId}, i.email, sha256(convert_to(i.email, 'UTF8')), ${list(db, profileInserts)}, coalesce(i.status, 'active'), i.cf::jsonb,
             case when i.status = 'unsubscribed' then ${at}::timestamptz end, ${at}, ${at}
      from input i order by i.ord
      on conflict (tenant_id, email_hash) do update set
        email = excluded.email,
        ${list(db, profileUpdates)},
        status = ${newStatus},
        custom_fields = case when c.status = 'deleted' then excluded.custom_fields
                             else (c.custom_fields - ${shape.customKeys}::text[]) || excluded.custom_fields end,
        unsubscribed_at = case when ${newStatus} = 'unsubscribed'
                               then case when c.status = 'unsubscribed' then coalesce(c.unsubscribed_at, ${at}::timestamptz) else ${at}::timestamptz end end,
        erased_at = null,
        best_send_hour = case when c.status = 'deleted' then null else c.best_send_hour end,
        created_at = case when c.status = 'deleted' then ${at}::timestamptz else c.created_at end,
        updated_at = ${at}::timestamptz
      where ${options.onExisting === 'update' ? db`true` : db`c.status = 'deleted'`}
      returning c.email_hash, (c.xmax = 0) as fresh
    )
    select count(*) filter (where w.fresh or p.status = 'deleted')::int as inserted,
           count(*) filter (where not w.fresh and coalesce(p.status, '') <> 'deleted')::int as updated,
           count(*)::int as returned
    from written w left join prior p on p.email_hash = w.email_hash`;
  return { inserted: counts!.inserted, updated: counts!.updated, skipped: rows.length - counts!.returned };
}

/** The addresses (of those given) whose contact exists and is not deleted: the others would be new contacts. */
export async function liveAddresses(db: Queryable, tenantId: string, emails: readonly string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const rows = await db<{ email: string }[]>`
    select q.email from unnest(${emails as string[]}::text[]) as q(email)
    join contacts c on c.tenant_id = ${tenantId} and c.email_hash = sha256(convert_to(q.email, 'UTF8')) and c.status <> 'deleted'`;
  return new Set(rows.map((r) => r.email));
}

/** Adds the contacts of these addresses to the list (already members stay as they were). */
export async function addListMembers(db: Queryable, tenantId: string, listId: string, emails: readonly string[], at: Date): Promise<void> {
  if (emails.length === 0) return;
  await db`
    insert into list_members (list_id, contact_id, tenant_id, added_at)
    select ${listId}, c.id, ${tenantId}, ${at} from contacts c
    where c.tenant_id = ${tenantId} and c.email_hash in (select sha256(convert_to(q.email, 'UTF8')) from unnest(${emails as string[]}::text[]) as q(email))
    on conflict (list_id, contact_id) do nothing`;
}

/** Whether the list is the tenant's; with `lock`, it cannot be deleted until the transaction ends. */
export async function listExists(db: Queryable, tenantId: string, listId: string, options: { lock?: boolean } = {}): Promise<boolean> {
  const rows = await db`select 1 from lists where id = ${listId} and tenant_id = ${tenantId} ${options.lock ? db`for key share` : db``}`;
  return rows.length > 0;
}
