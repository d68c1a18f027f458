// SQL for a tenant's contacts: read, page and count, many-row upsert, change, delete and erase. Every query is scoped to its tenant.
import type { Queryable } from '../../db/connection.js';
import { PROFILE_COLUMN_NAMES, type ContactStatus, type ProfileColumn } from './fields.js';
import type { ContactChanges, ContactWrite } from './input.js';

export type ContactRow = {
  id: string;
  tenant_id: string;
  /** Null once erased. */
  email: string | null;
  status: ContactStatus;
  /** As stored: values of deleted catalog fields included (filter with visibleCustomFields). */
  custom_fields: Record<string, unknown>;
  best_send_hour: number | null;
  unsubscribed_at: Date | null;
  erased_at: Date | null;
  created_at: Date;
  updated_at: Date;
} & Record<ProfileColumn, string | null>;

/** The unique key of a tenant's addresses (by hash, so an erased row keeps its address's place). */
export const CONTACT_HASH_KEY = 'contacts_tenant_hash_key';

const COLUMNS = [
  'id',
  'tenant_id',
  'email',
  ...PROFILE_COLUMN_NAMES,
  'status',
  'custom_fields',
  'best_send_hour',
  'unsubscribed_at',
  'erased_at',
  'created_at',
  'updated_at',
];

const columns = (db: Queryable) => db(COLUMNS);

/** LIKE treats % and _ as wildcards; a search for them means the characters themselves. */
export function likeContains(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export async function findContact(db: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<ContactRow | undefined> {
  const [row] = await db<ContactRow[]>`
    select ${columns(db)} from contacts where tenant_id = ${tenantId} and id = ${id} ${options.lock ? db`for update` : db``}`;
  return row;
}

export interface ContactFilter {
  statuses: readonly ContactStatus[];
  /** Lower-case text the address must contain (matched through the trigram index). */
  q?: string | undefined;
}

const filtered = (db: Queryable, tenantId: string, f: ContactFilter) =>
  db`tenant_id = ${tenantId} and status = any(${f.statuses as string[]}::text[]) ${f.q ? db`and email like ${likeContains(f.q)}` : db``}`;

/** A page of contacts, newest first. */
export async function listContacts(db: Queryable, tenantId: string, f: ContactFilter, page: { limit: number; offset: number }): Promise<ContactRow[]> {
  return db<ContactRow[]>`
    select ${columns(db)} from contacts where ${filtered(db, tenantId, f)}
    order by created_at desc, id desc limit ${page.limit} offset ${page.offset}`;
}

/** Matches of a filter counted up to `cap + 1` rows at most, so a broad search never counts a million rows. */
export async function countContactsCapped(db: Queryable, tenantId: string, f: ContactFilter, cap: number): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::int as n from (select 1 from contacts where ${filtered(db, tenantId, f)} limit ${cap + 1}) m`;
  return row!.n;
}

/** The exact number of contacts with these statuses, from the counts the triggers keep (no rows counted). */
export async function countByStatus(db: Queryable, tenantId: string, statuses: readonly ContactStatus[]): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select coalesce(sum(n), 0)::float8 as n from contact_counts where tenant_id = ${tenantId} and status = any(${statuses as string[]}::text[])`;
  return row!.n;
}

export interface ContactMatch {
  id: string;
  /** The address asked about (an erased row has none stored). */
  email: string;
  status: ContactStatus;
  erased: boolean;
}

/**
 * The tenant's contacts of these normalized addresses, matched by hash (deleted and erased rows included):
 * one query for many, in no particular order. Addresses without a contact are absent from the answer.
 */
export async function findContactsByEmails(db: Queryable, tenantId: string, emails: readonly string[]): Promise<ContactMatch[]> {
  if (emails.length === 0) return [];
  return db<ContactMatch[]>`
    select c.id, q.email, c.status, c.erased_at is not null as erased
    from unnest(${emails as string[]}::text[]) as q(email)
    join contacts c on c.tenant_id = ${tenantId} and c.email_hash = sha256(convert_to(q.email, 'UTF8'))`;
}

/** inserted: a new contact, or one that was deleted or erased made anew; updated: an existing one changed; skipped: left as it was. */
export type UpsertOutcome = 'inserted' | 'updated' | 'skipped';

export interface UpsertResult {
  email: string;
  id: string;
  outcome: UpsertOutcome;
}

/** One profile column in the conflict update: a contact made anew takes the input as is, a live one only the columns given. */
const profileUpdate = (db: Queryable, column: ProfileColumn) =>
  db`case when c.status = 'deleted' or i.profile ? ${column}::text then i.profile->>${column}::text else c.${db(column)} end`;

/**
 * Upserts many contacts of one tenant in one statement (a multi-row insert … on conflict (tenant_id, email_hash)
 * do update) and answers, in input order, each address's contact id and outcome. Rows must be checked
 * (checkContactWrite) and their addresses distinct (a repeat is a programming error: thrown).
 *
 * - A new address is inserted with the profile given, status given or active, and custom_fields set.
 * - An address whose contact is deleted or erased is made anew in that row (same id; email, profile, custom
 *   fields and status replaced as for a new one, erased_at cleared, created_at now): outcome inserted.
 * - An address with a live contact (active or unsubscribed): with `onExisting: 'update'` only the profile
 *   columns given change, status when given, custom_fields merged (set keys set, removed keys removed);
 *   with 'skip' it is left as it was (outcome skipped).
 * - An unsubscribed contact stays unsubscribed (re-subscribing is markResubscribed's alone).
 * - unsubscribed_at is stamped when the status becomes unsubscribed and cleared when it becomes active.
 *
 * Required custom fields of new contacts are the caller's to check (findContactsByEmails says which are new).
 */
export async function upsertContacts(
  db: Queryable,
  tenantId: string,
  rows: readonly ContactWrite[],
  options: { onExisting: 'update' | 'skip'; at: Date },
): Promise<UpsertResult[]> {
  if (rows.length === 0) return [];
  if (new Set(rows.map((r) => r.email)).size !== rows.length) throw new Error('upsertContacts: addresses must be distinct (merge repeats first)');
  const at = options.at;
  const input = rows.map((r) => ({ email: r.email, profile: r.profile, status: r.status ?? null, set: r.customFields.set, remove: r.customFields.remove }));
  const profileColumns = PROFILE_COLUMN_NAMES.map((column) => db`${db(column)}`).reduce((all, next) => db`${all}, ${next}`);
  const profileInserts = PROFILE_COLUMN_NAMES.map((column) => db`i.profile->>${column}::text`).reduce((all, next) => db`${all}, ${next}`);
  const profileUpdates = PROFILE_COLUMN_NAMES.map((column) => profileUpdate(db, column)).reduce((all, next) => db`${all}, ${next}`);
  // An unsubscribed contact stays so: only markResubscribed makes it active (the service answers 409 to the ask).
  const newStatus = db`(case when c.status = 'deleted' then coalesce(i.status, 'active') when c.status = 'unsubscribed' then 'unsubscribed'
                             else coalesce(i.status, c.status) end)`;
  return db<UpsertResult[]>`
    with input as (
      select e.ord, e.v->>'email' as email, e.v->'profile' as profile, e.v->>'status' as status, e.v->'set' as cf_set,
             array(select jsonb_array_elements_text(e.v->'remove')) as cf_remove
      from jsonb_array_elements(${db.json(input as never)}::jsonb) with ordinality as e(v, ord)
    ),
    prior as (
      select c.id, c.email_hash, c.status from contacts c
      where c.tenant_id = ${tenantId} and c.email_hash in (select sha256(convert_to(i.email, 'UTF8')) from input i)
    ),
    written as (
      insert into contacts as c (tenant_id, email, ${profileColumns}, status, custom_fields, unsubscribed_at, created_at, updated_at)
      select ${tenantId}, i.email, ${profileInserts}, coalesce(i.status, 'active'), i.cf_set,
             case when i.status = 'unsubscribed' then ${at}::timestamptz end, ${at}, ${at}
      from input i order by i.ord
      on conflict (tenant_id, email_hash) do update set
        (email, ${profileColumns}, status, custom_fields, unsubscribed_at, erased_at, best_send_hour, created_at, updated_at) = (
          select excluded.email, ${profileUpdates}, ${newStatus},
                 case when c.status = 'deleted' then i.cf_set else (c.custom_fields || i.cf_set) - i.cf_remove end,
                 case when ${newStatus} = 'unsubscribed'
                   then case when c.status = 'unsubscribed' then coalesce(c.unsubscribed_at, ${at}::timestamptz) else ${at}::timestamptz end end,
                 null::timestamptz,
                 case when c.status = 'deleted' then null else c.best_send_hour end,
                 case when c.status = 'deleted' then ${at}::timestamptz else c.created_at end,
                 ${at}::timestamptz
          from input i where i.email = excluded.email)
        where ${options.onExisting === 'update' ? db`true` : db`c.status = 'deleted'`}
      returning c.id, c.email, (c.xmax = 0) as fresh
    )
    select i.email, coalesce(w.id, p.id) as id,
           case when w.id is null then 'skipped' when w.fresh or p.status = 'deleted' then 'inserted' else 'updated' end as outcome
    from input i
    left join written w on w.email = i.email
    left join prior p on p.email_hash = sha256(convert_to(i.email, 'UTF8'))
    order by i.ord`;
}

/**
 * Applies a checked PATCH to a live contact: the profile columns given, a new address (its hash follows by
 * trigger; a taken one violates CONTACT_HASH_KEY), status (stamping or clearing unsubscribed_at), custom_fields merged.
 */
export async function updateContact(db: Queryable, tenantId: string, id: string, c: ContactChanges, at: Date): Promise<ContactRow | undefined> {
  const values: Record<string, unknown> = { ...c.profile, updated_at: at };
  if (c.email !== undefined) values['email'] = c.email;
  const status = c.status;
  const [row] = await db<ContactRow[]>`
    update contacts set ${db(values)},
      custom_fields = (custom_fields || ${db.json(c.customFields.set as never)}::jsonb) - ${c.customFields.remove}::text[]
      ${
        status === undefined
          ? db``
          : db`, status = ${status},
        unsubscribed_at = case when ${status}::text = 'unsubscribed'
          then case when status = 'unsubscribed' then coalesce(unsubscribed_at, ${at}::timestamptz) else ${at}::timestamptz end end`
      }
    where tenant_id = ${tenantId} and id = ${id}
    returning ${columns(db)}`;
  return row;
}

/** An unsubscribed contact made active again (its re-subscription is audited by the caller). */
export async function markResubscribed(db: Queryable, tenantId: string, id: string, at: Date): Promise<ContactRow | undefined> {
  const [row] = await db<ContactRow[]>`
    update contacts set status = 'active', unsubscribed_at = null, updated_at = ${at}
    where tenant_id = ${tenantId} and id = ${id} and status = 'unsubscribed'
    returning ${columns(db)}`;
  return row;
}

/** Marks the contact deleted (the row stays: its history and suppression still work) and takes it out of every list. */
export async function markContactDeleted(db: Queryable, tenantId: string, id: string, at: Date): Promise<void> {
  await db`update contacts set status = 'deleted', updated_at = ${at} where tenant_id = ${tenantId} and id = ${id} and status <> 'deleted'`;
  await db`delete from list_members where tenant_id = ${tenantId} and contact_id = ${id}`;
}

/**
 * Erases the contact's personal data: address, every profile column and custom field, the unsubscribe and
 * send-hour data; status deleted, erased_at set (kept from a first erasure), list memberships removed. The address hash stays.
 */
export async function eraseContactRow(db: Queryable, tenantId: string, id: string, at: Date): Promise<void> {
  const nulls = Object.fromEntries(PROFILE_COLUMN_NAMES.map((column) => [column, null]));
  await db`
    update contacts set ${db({ ...nulls, email: null })}, custom_fields = '{}', status = 'deleted', best_send_hour = null,
      unsubscribed_at = null, erased_at = coalesce(erased_at, ${at}), updated_at = ${at}
    where tenant_id = ${tenantId} and id = ${id}`;
  await db`delete from list_members where tenant_id = ${tenantId} and contact_id = ${id}`;
}

/** The stored address hash of a contact (what the suppression of an erased person keeps). */
export async function contactHash(db: Queryable, tenantId: string, id: string): Promise<Buffer | undefined> {
  const [row] = await db<{ email_hash: Buffer }[]>`select email_hash from contacts where tenant_id = ${tenantId} and id = ${id}`;
  return row?.email_hash;
}
