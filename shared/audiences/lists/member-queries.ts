// SQL for list membership: batch add and remove in one statement each, member pages and the member-id pager, keyset on (added_at, contact_id), and
// a contact's lists, keyset on (added_at, list_id).
import type { ContactStatus } from '../contacts/fields.js';
import type { Queryable } from '../../db/connection.js';

/**
 * A keyset position in memberships: added_at in whole microseconds (a Date would round to ms) and the id that breaks
 * ties: the contact id in a list's members, the list id in a contact's lists.
 */
export interface MemberPosition {
  us: string;
  id: string;
}

export interface MemberRow {
  id: string;
  /** Null once the contact was erased. */
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  status: ContactStatus;
  added_at: Date;
  added_us: string;
}

/** A contact a batch named (by id or by address) and what the batch did to its membership. */
export interface MatchedContact {
  id: string;
  email: string | null;
  status: ContactStatus;
  /** Add: a list_members row was inserted. Remove: one was deleted. */
  changed: boolean;
}

/** The contacts to look up: ids already checked to be UUIDs, addresses already normalized. */
export interface ContactRefs {
  ids: readonly string[];
  emails: readonly string[];
}

const addedUs = (db: Queryable) => db`(extract(epoch from m.added_at) * 1000000)::bigint::text`;
/** The keyset condition: after (added_at, tie) where the tie is m.contact_id (a list's members) or m.list_id (a contact's lists). */
const afterPosition = (db: Queryable, after: MemberPosition | undefined, tie = db`m.contact_id`) =>
  after ? db`and (m.added_at, ${tie}) > (timestamptz 'epoch' + ${after.us}::bigint * interval '1 microsecond', ${after.id}::uuid)` : db``;
const statusFilter = (db: Queryable, statuses: readonly ContactStatus[] | undefined) =>
  statuses ? db`and c.status = any(${statuses as string[]}::text[])` : db``;

/**
 * Adds the tenant's contacts named by id or address to the list in one statement, and answers one row per
 * contact found (of this tenant only: another tenant's id matches nothing). Deleted contacts are not added.
 * The contacts are share-locked, so a contact deleted concurrently is either seen deleted here or has this
 * membership removed by its deletion afterwards. Rows are inserted in contact-id order, so concurrent batches
 * wait on each other's rows in one order and cannot deadlock; on conflict (already a member, also one a
 * concurrent batch just added) nothing is inserted, and the insert trigger counts only inserted rows.
 * The caller has checked (and key-share locked) the list.
 */
export async function insertMembers(db: Queryable, tenantId: string, listId: string, refs: ContactRefs, at: Date): Promise<MatchedContact[]> {
  if (refs.ids.length === 0 && refs.emails.length === 0) return [];
  return db<MatchedContact[]>`
    with found as (
      select id, email, status from contacts
      where tenant_id = ${tenantId} and (id = any(${refs.ids as string[]}::uuid[]) or email = any(${refs.emails as string[]}::text[]))
      for share
    ), inserted as (
      insert into list_members (list_id, contact_id, tenant_id, added_at)
      select ${listId}, id, ${tenantId}, ${at} from found where status <> 'deleted' order by id
      on conflict (list_id, contact_id) do nothing
      returning contact_id
    )
    select f.id, f.email, f.status, i.contact_id is not null as changed
    from found f left join inserted i on i.contact_id = f.id`;
}

/**
 * Removes the tenant's contacts named by id or address from the list in one statement, and answers one row
 * per contact found. Member rows are locked in contact-id order before they are deleted (no deadlock between
 * concurrent batches); a row a concurrent batch removed first is not removed twice, so the delete trigger's
 * count stays exact.
 */
export async function deleteMembers(db: Queryable, tenantId: string, listId: string, refs: ContactRefs): Promise<MatchedContact[]> {
  if (refs.ids.length === 0 && refs.emails.length === 0) return [];
  return db<MatchedContact[]>`
    with found as (
      select id, email, status from contacts
      where tenant_id = ${tenantId} and (id = any(${refs.ids as string[]}::uuid[]) or email = any(${refs.emails as string[]}::text[]))
    ), locked as (
      select contact_id from list_members
      where list_id = ${listId} and contact_id in (select id from found)
      order by contact_id
      for update
    ), removed as (
      delete from list_members m using locked l
      where m.list_id = ${listId} and m.contact_id = l.contact_id
      returning m.contact_id
    )
    select f.id, f.email, f.status, r.contact_id is not null as changed
    from found f left join removed r on r.contact_id = f.id`;
}

const memberColumns = (db: Queryable) => db`c.id, c.email, c.first_name, c.last_name, c.status, m.added_at, ${addedUs(db)} as added_us`;

/** One member of a list (the list already checked to be the tenant's), or undefined when the contact is not in it. */
export async function findMember(db: Queryable, listId: string, contactId: string): Promise<MemberRow | undefined> {
  const [row] = await db<MemberRow[]>`
    select ${memberColumns(db)}
    from list_members m join contacts c on c.id = m.contact_id
    where m.list_id = ${listId} and m.contact_id = ${contactId}`;
  return row;
}

/** A page of a list's members in the order they were added, after a keyset position; optionally only some statuses. */
export async function listMembers(
  db: Queryable,
  listId: string,
  page: { limit: number; after?: MemberPosition | undefined; statuses?: readonly ContactStatus[] | undefined },
): Promise<MemberRow[]> {
  return db<MemberRow[]>`
    select ${memberColumns(db)}
    from list_members m join contacts c on c.id = m.contact_id
    where m.list_id = ${listId} ${afterPosition(db, page.after)} ${statusFilter(db, page.statuses)}
    order by m.added_at, m.contact_id
    limit ${page.limit}`;
}

/**
 * Members of some statuses, counted (a join over the whole list: the unfiltered total is lists.member_count,
 * which costs nothing; this one grows with the list).
 */
export async function countMembersByStatus(db: Queryable, listId: string, statuses: readonly ContactStatus[]): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::float8 as n
    from list_members m join contacts c on c.id = m.contact_id
    where m.list_id = ${listId} ${statusFilter(db, statuses)}`;
  return row!.n;
}

/**
 * The next `limit` member contact ids of a tenant's list in keyset order (added_at, contact_id), after a
 * position, with the position of the last one. Only the tenant's rows: a list id of another tenant yields nothing.
 */
export async function memberIdsAfter(
  db: Queryable,
  tenantId: string,
  listId: string,
  page: { limit: number; after?: MemberPosition | undefined; statuses?: readonly ContactStatus[] | undefined },
): Promise<{ contact_id: string; added_us: string }[]> {
  return page.statuses
    ? db<{ contact_id: string; added_us: string }[]>`
        select m.contact_id, ${addedUs(db)} as added_us
        from list_members m join contacts c on c.id = m.contact_id
        where m.list_id = ${listId} and m.tenant_id = ${tenantId} ${afterPosition(db, page.after)} ${statusFilter(db, page.statuses)}
        order by m.added_at, m.contact_id
        limit ${page.limit}`
    : db<{ contact_id: string; added_us: string }[]>`
        select m.contact_id, ${addedUs(db)} as added_us
        from list_members m
        where m.list_id = ${listId} and m.tenant_id = ${tenantId} ${afterPosition(db, page.after)}
        order by m.added_at, m.contact_id
        limit ${page.limit}`;
}

/** A list a contact is in, with when the contact was added to it. */
export interface ContactListRow {
  id: string;
  name: string;
  added_at: Date;
  added_us: string;
}

/**
 * A page of the lists a tenant's contact is in, in the order it was added to them, after a keyset position. The
 * contact is not checked: another tenant's contact id yields no rows (list_members carries the tenant).
 */
export async function listsOfContact(
  db: Queryable,
  tenantId: string,
  contactId: string,
  page: { limit: number; after?: MemberPosition | undefined },
): Promise<ContactListRow[]> {
  return db<ContactListRow[]>`
    select l.id, l.name, m.added_at, ${addedUs(db)} as added_us
    from list_members m join lists l on l.id = m.list_id
    where m.contact_id = ${contactId} and m.tenant_id = ${tenantId} ${afterPosition(db, page.after, db`m.list_id`)}
    order by m.added_at, m.list_id
    limit ${page.limit}`;
}

/** How many lists a tenant's contact is in (list_members_contact_idx: a contact's memberships, not the table). */
export async function countListsOfContact(db: Queryable, tenantId: string, contactId: string): Promise<number> {
  const [row] = await db<{ n: number }[]>`
    select count(*)::float8 as n from list_members where contact_id = ${contactId} and tenant_id = ${tenantId}`;
  return row!.n;
}
