// List membership: add and remove one contact or a batch (per-row results), read members and a contact's lists in pages, and the member-id pager
// campaigns send with.
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { ContactStatus } from '../contacts/fields.js';
import { requireContact } from '../contacts/service.js';
import type { Queryable } from '../../db/connection.js';
import { normalizeEmail } from '../../kernel/email.js';
import { AppError, conflict, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import {
  countListsOfContact,
  countMembersByStatus,
  deleteMembers,
  findMember,
  insertMembers,
  listMembers,
  listsOfContact,
  memberIdsAfter,
  type ContactListRow,
  type ContactRefs,
  type MatchedContact,
  type MemberPosition,
  type MemberRow,
} from './member-queries.js';
import { requireList, type ListDeps } from './service.js';

/** Entries (ids and addresses together) one batch call may name: one call stays one short transaction. */
export const MAX_BATCH = 1000;

export const ADD_STATUSES = ['added', 'already_member', 'not_found', 'deleted', 'invalid'] as const;
export const REMOVE_STATUSES = ['removed', 'not_member', 'not_found', 'invalid'] as const;
export type AddStatus = (typeof ADD_STATUSES)[number];
export type RemoveStatus = (typeof REMOVE_STATUSES)[number];

export interface BatchRow<S extends string> {
  /** The entry as sent. */
  input: string;
  /** Which array of the request it came from. */
  field: 'contact_ids' | 'emails';
  /** The contact it names; null when invalid or not found. */
  contact_id: string | null;
  status: S;
  /** Why, for invalid, not_found and deleted entries; null otherwise. */
  message: string | null;
}

export interface BatchResult<S extends string> {
  results: BatchRow<S>[];
  totals: Record<S, number>;
}

export interface BatchInput {
  contact_ids?: string[] | undefined;
  emails?: string[] | undefined;
}

// ---- keyset cursors of membership pages (a list's members, a contact's lists) ----

/** Opaque cursor of a membership position: added_at in whole microseconds and the id that breaks ties. */
export function encodeMemberCursor(p: MemberPosition): string {
  return Buffer.from(`${p.us}|${p.id}`, 'utf8').toString('base64url');
}

export function decodeMemberCursor(cursor: string): MemberPosition {
  const [us, id, ...rest] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  if (rest.length > 0 || !us || !/^-?\d{1,18}$/.test(us) || !id || !isUuid(id) || encodeMemberCursor({ us, id }) !== cursor) {
    throw new AppError('bad_request', 'after: not a cursor returned by this list');
  }
  return { us, id };
}

// ---- batches ----

/** An entry being settled: its row and the key it is looked up by (a lower-cased id or a normalized address). */
interface Entry {
  row: BatchRow<string>;
  key: string | null;
}

interface Parsed {
  entries: Entry[];
  refs: ContactRefs;
}

/** Checks every entry on its own (a bad one never fails the others) and collects the distinct ids and addresses to look up. */
function parseBatch(input: BatchInput): Parsed {
  const ids = input.contact_ids ?? [];
  const emails = input.emails ?? [];
  if (ids.length + emails.length === 0) throw validationError('contact_ids', `give contact_ids, emails or both (1..${MAX_BATCH} entries in all)`);
  if (ids.length + emails.length > MAX_BATCH) {
    throw validationError(
      emails.length > 0 ? 'emails' : 'contact_ids',
      `contact_ids and emails hold at most ${MAX_BATCH} entries in all (got ${ids.length + emails.length}); split the batch`,
    );
  }
  const entry = (input: string, field: BatchRow<string>['field'], key: string | null, message: string | null): Entry => ({
    row: { input, field, contact_id: null, status: key === null ? 'invalid' : 'pending', message },
    key,
  });
  const entries: Entry[] = ids.map((raw) => {
    const id = raw.trim();
    return isUuid(id) ? entry(raw, 'contact_ids', id.toLowerCase(), null) : entry(raw, 'contact_ids', null, 'not a contact id');
  });
  emails.forEach((raw, i) => {
    try {
      entries.push(entry(raw, 'emails', normalizeEmail(raw, `emails.${i}`), null));
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      entries.push(entry(raw, 'emails', null, err.message));
    }
  });
  const keys = (field: BatchRow<string>['field']) => [...new Set(entries.flatMap((e) => (e.row.field === field && e.key ? [e.key] : [])))];
  return { entries, refs: { ids: keys('contact_ids'), emails: keys('emails') } };
}

/**
 * Gives each valid entry its outcome from the contacts the statement matched. A contact named twice in one batch
 * (twice, or by id and by address) gets `unchanged` after its first entry: only the first entry made the change.
 */
function settle<S extends string>(parsed: Parsed, matched: MatchedContact[], outcome: { changed: S; unchanged: S; notFound: S; deleted?: S }): BatchRow<S>[] {
  const byId = new Map(matched.map((m) => [m.id, m]));
  const byEmail = new Map(matched.flatMap((m) => (m.email ? [[m.email, m] as const] : [])));
  const done = new Set<string>();
  for (const { row, key } of parsed.entries) {
    if (key === null) continue;
    const m = row.field === 'contact_ids' ? byId.get(key) : byEmail.get(key);
    if (!m) {
      row.status = outcome.notFound;
      row.message = row.field === 'contact_ids' ? 'no contact of this account has this id' : 'no contact of this account has this address';
      continue;
    }
    row.contact_id = m.id;
    if (outcome.deleted && m.status === 'deleted') {
      row.status = outcome.deleted;
      row.message = 'the contact is deleted: restore it (POST /contacts with its address) before adding it';
    } else {
      row.status = m.changed && !done.has(m.id) ? outcome.changed : outcome.unchanged;
    }
    done.add(m.id);
  }
  return parsed.entries.map((e) => e.row as BatchRow<S>);
}

function totalsOf<S extends string>(statuses: readonly S[], rows: BatchRow<S>[]): Record<S, number> {
  const totals = Object.fromEntries(statuses.map((s) => [s, 0])) as Record<S, number>;
  for (const row of rows) totals[row.status]++;
  return totals;
}

async function audit(db: Queryable, tenantId: string, actor: AuditActor, listId: string, action: string, ids: string[], at: Date): Promise<void> {
  if (ids.length === 0) return;
  await writeAudit(db, { tenantId, actor, action, resourceType: 'list', resourceId: listId, metadata: { count: ids.length, contact_ids: ids }, at });
}

const changedIds = (matched: MatchedContact[]) =>
  matched
    .filter((m) => m.changed)
    .map((m) => m.id)
    .sort();

/**
 * Adds up to MAX_BATCH contacts, named by id or address, in one insert statement. Each entry gets its outcome:
 * added, already_member (also a repeat within the batch), not_found (no contact of this tenant: lists never create
 * contacts), deleted (refused) or invalid. One audit row covers the batch.
 */
export async function addMembers(deps: ListDeps, tenantId: string, actor: AuditActor, listId: string, input: BatchInput): Promise<BatchResult<AddStatus>> {
  const parsed = parseBatch(input);
  const at = deps.clock.now();
  const matched = await deps.sql.begin(async (tx) => {
    await requireList(tx, tenantId, listId, { lock: 'key share' });
    const matched = await insertMembers(tx, tenantId, listId, parsed.refs, at);
    await audit(tx, tenantId, actor, listId, 'list.members_added', changedIds(matched), at);
    return matched;
  });
  const rows = settle<AddStatus>(parsed, matched, { changed: 'added', unchanged: 'already_member', notFound: 'not_found', deleted: 'deleted' });
  return { results: rows, totals: totalsOf(ADD_STATUSES, rows) };
}

/** Removes up to MAX_BATCH contacts in one delete statement: removed, not_member (also a repeat), not_found or invalid each. */
export async function removeMembers(
  deps: ListDeps,
  tenantId: string,
  actor: AuditActor,
  listId: string,
  input: BatchInput,
): Promise<BatchResult<RemoveStatus>> {
  const parsed = parseBatch(input);
  const at = deps.clock.now();
  const matched = await deps.sql.begin(async (tx) => {
    await requireList(tx, tenantId, listId, { lock: 'key share' });
    const matched = await deleteMembers(tx, tenantId, listId, parsed.refs);
    await audit(tx, tenantId, actor, listId, 'list.members_removed', changedIds(matched), at);
    return matched;
  });
  const rows = settle<RemoveStatus>(parsed, matched, { changed: 'removed', unchanged: 'not_member', notFound: 'not_found' });
  return { results: rows, totals: totalsOf(REMOVE_STATUSES, rows) };
}

// ---- one contact ----

/**
 * PUT /lists/{id}/members/{contactID}: idempotent. 404 for an unknown list or contact (another tenant's alike),
 * 409 for a deleted contact.
 */
export async function addMember(
  deps: ListDeps,
  tenantId: string,
  actor: AuditActor,
  listId: string,
  contactId: string,
): Promise<{ member: MemberRow; added: boolean }> {
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    await requireList(tx, tenantId, listId, { lock: 'key share' });
    const [m] = isUuid(contactId) ? await insertMembers(tx, tenantId, listId, { ids: [contactId.toLowerCase()], emails: [] }, at) : [];
    if (!m) throw notFound('contact');
    if (m.status === 'deleted') throw conflict('this contact is deleted: restore it (POST /contacts with its address) before adding it to a list');
    await audit(tx, tenantId, actor, listId, 'list.members_added', changedIds([m]), at);
    return { member: (await findMember(tx, listId, m.id))!, added: m.changed };
  });
}

/** DELETE /lists/{id}/members/{contactID}: 404 for an unknown list or contact, and for a contact not in the list. */
export async function removeMember(deps: ListDeps, tenantId: string, actor: AuditActor, listId: string, contactId: string): Promise<void> {
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    await requireList(tx, tenantId, listId, { lock: 'key share' });
    const [m] = isUuid(contactId) ? await deleteMembers(tx, tenantId, listId, { ids: [contactId.toLowerCase()], emails: [] }) : [];
    if (!m) throw notFound('contact');
    if (!m.changed) throw notFound('list member (the contact is not in this list)');
    await audit(tx, tenantId, actor, listId, 'list.members_removed', [m.id], at);
  });
}

export async function getMember(db: Queryable, tenantId: string, listId: string, contactId: string): Promise<MemberRow> {
  const list = await requireList(db, tenantId, listId);
  const row = isUuid(contactId) ? await findMember(db, list.id, contactId.toLowerCase()) : undefined;
  if (!row) throw notFound('list member');
  return row;
}

// ---- pages ----

/**
 * A page of the list's members in the order they were added (a member added while a client pages appears at the end).
 * total is the list's member_count without a status filter (free), a count with one.
 */
export async function listMemberPage(
  db: Queryable,
  tenantId: string,
  listId: string,
  page: { limit: number; after?: string | undefined; status?: ContactStatus | undefined },
): Promise<{ items: MemberRow[]; next_cursor: string | null; total: number }> {
  const after = page.after ? decodeMemberCursor(page.after) : undefined;
  const list = await requireList(db, tenantId, listId);
  const statuses = page.status ? [page.status] : undefined;
  const rows = await listMembers(db, list.id, { limit: page.limit + 1, after, statuses });
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  const next_cursor = rows.length > page.limit && last ? encodeMemberCursor({ us: last.added_us, id: last.id }) : null;
  const total = statuses ? await countMembersByStatus(db, list.id, statuses) : list.member_count;
  return { items, next_cursor, total };
}

/**
 * GET /contacts/{id}/lists: a page of the lists the contact is in, in the order it was added to them (a list it
 * joins while a client pages appears at the end). 404 for an unknown contact (another tenant's alike).
 */
export async function listContactListPage(
  db: Queryable,
  tenantId: string,
  contactId: string,
  page: { limit: number; after?: string | undefined },
): Promise<{ items: ContactListRow[]; next_cursor: string | null; total: number }> {
  const after = page.after ? decodeMemberCursor(page.after) : undefined;
  const contact = await requireContact(db, tenantId, contactId);
  const [rows, total] = await Promise.all([
    listsOfContact(db, tenantId, contact.id, { limit: page.limit + 1, after }),
    countListsOfContact(db, tenantId, contact.id),
  ]);
  const items = rows.slice(0, page.limit);
  const last = items[items.length - 1];
  return { items, next_cursor: rows.length > page.limit && last ? encodeMemberCursor({ us: last.added_us, id: last.id }) : null, total };
}

/**
 * For sends (the campaigns issue): the next `limit` member contact ids of a tenant's list in keyset order
 * (added_at, contact_id), after `after` (a `next` of a previous call; undefined to start). `next` is null once a
 * page came back short (the end). `statuses` keeps only contacts of those statuses (e.g. ['active']); deleted
 * contacts can stay members and are skipped this way. The list is not checked: another tenant's list id, or an
 * unknown one, yields no ids. Members added while paging appear at the end, so a walk sees each member that
 * stays in the list once.
 */
export async function listMemberIdPage(
  db: Queryable,
  tenantId: string,
  listId: string,
  page: { limit: number; after?: string | undefined; statuses?: readonly ContactStatus[] | undefined },
): Promise<{ ids: string[]; next: string | null }> {
  if (!isUuid(listId)) return { ids: [], next: null };
  const after = page.after ? decodeMemberCursor(page.after) : undefined;
  const rows = await memberIdsAfter(db, tenantId, listId, { limit: page.limit, after, statuses: page.statuses });
  const last = rows[rows.length - 1];
  return {
    ids: rows.map((r) => r.contact_id),
    next: rows.length === page.limit && last ? encodeMemberCursor({ us: last.added_us, id: last.contact_id }) : null,
  };
}

/** Every member contact id of a tenant's list, `batchSize` at a time, in keyset order (one query per batch). */
export async function* eachMemberIdBatch(
  db: Queryable,
  tenantId: string,
  listId: string,
  options: { batchSize?: number; statuses?: readonly ContactStatus[] } = {},
): AsyncGenerator<string[]> {
  let after: string | undefined;
  for (;;) {
    const page = await listMemberIdPage(db, tenantId, listId, { limit: options.batchSize ?? 1000, after, statuses: options.statuses });
    if (page.ids.length > 0) yield page.ids;
    if (page.next === null) return;
    after = page.next;
  }
}
