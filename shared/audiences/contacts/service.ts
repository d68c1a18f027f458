// Tenant operations on contacts: page and search, read, create or upsert, change, delete, and erase (GDPR).
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import { listCustomFields } from '../custom-fields/queries.js';
import { visibleCustomFields, type FieldDefinition } from '../custom-fields/values.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { conflict, isUniqueViolation, notFound, validationError, type AppError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import { scrubRecipient } from '../../sending/outbound-log/erasure-queries.js';
import { eraseSuppression } from '../suppressions/queries.js';
import { suppress } from '../suppressions/service.js';
import type { ContactStatus } from './fields.js';
import { checkContactChanges, checkContactWrite, type ContactInput } from './input.js';
import {
  CONTACT_HASH_KEY,
  contactHash,
  countByStatus,
  countContactsCapped,
  eraseContactRow,
  findContact,
  findContactsByEmails,
  listContacts,
  markContactDeleted,
  markResubscribed,
  updateContact,
  upsertContacts,
  type ContactRow,
} from './queries.js';

export interface ContactDeps {
  sql: Sql;
  clock: Clock;
}

/** A search (q) is counted up to this many matches; beyond it total is this number and total_is_capped is true. */
export const SEARCH_COUNT_CAP = 10_000;

/** GET /contacts' status filter: one status, all of them, or (default) every one but deleted. */
export type StatusFilter = ContactStatus | 'all';

const STATUSES_OF: Record<StatusFilter | 'default', readonly ContactStatus[]> = {
  active: ['active'],
  unsubscribed: ['unsubscribed'],
  deleted: ['deleted'],
  all: ['active', 'unsubscribed', 'deleted'],
  default: ['active', 'unsubscribed'],
};

/** A contact as shown: custom_fields holds only values of fields still in the catalog. */
export type ContactView = ContactRow;

const view = (catalog: readonly Pick<FieldDefinition, 'key'>[], row: ContactRow): ContactView => ({
  ...row,
  custom_fields: visibleCustomFields(catalog, row.custom_fields),
});

export interface ContactPage {
  items: ContactView[];
  total: number;
  /** True when a search matched more than SEARCH_COUNT_CAP contacts: total is then that cap. */
  total_is_capped: boolean;
  limit: number;
  offset: number;
}

/**
 * A page of contacts, newest first. total is exact and read from the per-status counts when there is no
 * search; with q it counts matches up to SEARCH_COUNT_CAP (total_is_capped says when there are more).
 */
export async function listContactPage(
  db: Queryable,
  tenantId: string,
  query: { q?: string | undefined; status?: StatusFilter | undefined; limit: number; offset: number },
): Promise<ContactPage> {
  const statuses = STATUSES_OF[query.status ?? 'default'];
  // Stored addresses are lower case: a lower-cased search is case-insensitive.
  const q = query.q?.trim().toLowerCase() || undefined;
  const filter = { statuses, q };
  const [catalog, rows] = await Promise.all([listCustomFields(db, tenantId), listContacts(db, tenantId, filter, query)]);
  let total: number;
  let capped = false;
  if (q === undefined) {
    total = await countByStatus(db, tenantId, statuses);
  } else {
    const counted = await countContactsCapped(db, tenantId, filter, SEARCH_COUNT_CAP);
    capped = counted > SEARCH_COUNT_CAP;
    total = Math.min(counted, SEARCH_COUNT_CAP);
  }
  return { items: rows.map((r) => view(catalog, r)), total, total_is_capped: capped, limit: query.limit, offset: query.offset };
}

/** A tenant's contact or 404 (malformed ids and other tenants' contacts alike); `lock` holds it until the transaction ends. */
export async function requireContact(db: Queryable, tenantId: string, id: string, options: { lock?: boolean } = {}): Promise<ContactRow> {
  const row = isUuid(id) ? await findContact(db, tenantId, id, options) : undefined;
  if (!row) throw notFound('contact');
  return row;
}

export async function getContact(db: Queryable, tenantId: string, id: string): Promise<ContactView> {
  const [catalog, row] = await Promise.all([listCustomFields(db, tenantId), requireContact(db, tenantId, id)]);
  return view(catalog, row);
}

/**
 * POST /contacts. A live contact (active or unsubscribed) with the address is 409, or with `upsert` is
 * updated (profile columns given, status when given, custom fields merged; status active on an unsubscribed
 * one is 409, as for PATCH). A deleted or erased one is
 * made anew in its row (same id). `created` says whether the answer is a new contact.
 */
export async function createContact(
  deps: ContactDeps,
  tenantId: string,
  input: ContactInput,
  options: { upsert: boolean },
): Promise<{ contact: ContactView; created: boolean }> {
  const catalog = await listCustomFields(deps.sql, tenantId);
  // Checked once without knowing whether it is new, so a bad payload never opens a transaction.
  const checked = checkContactWrite(catalog, input, { creating: false });
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const [existing] = await findContactsByEmails(tx, tenantId, [checked.email]);
    const live = existing !== undefined && existing.status !== 'deleted';
    if (live && !options.upsert)
      throw conflict(`a contact with the address ${checked.email} already exists (id ${existing.id}); add ?upsert=true to update it`);
    if (live && existing.status === 'unsubscribed' && checked.status === 'active') throw resubscribeConflict(existing.id);
    const write = live ? checked : checkContactWrite(catalog, input, { creating: true });
    const [result] = await upsertContacts(tx, tenantId, [write], { onExisting: options.upsert ? 'update' : 'skip', at });
    // Skipped: another request created the address since the look-up above.
    if (!result || result.outcome === 'skipped') throw conflict(`a contact with the address ${checked.email} already exists`);
    return { contact: view(catalog, (await findContact(tx, tenantId, result.id))!), created: result.outcome === 'inserted' };
  });
}

/** Answered to a write that would set an unsubscribed contact active as a side effect: consent comes back only explicitly. */
export function resubscribeConflict(id: string): AppError {
  return conflict(
    `this contact is unsubscribed: a write cannot make it active again; re-subscribing needs the person's consent, ` +
      `recorded with POST /contacts/${id}/resubscribe and a reason`,
  );
}

/** A re-subscription's stated reason: why the person may be mailed again (their consent), kept in the audit row. */
export const RESUBSCRIBE_REASON_MAX = 500;

/**
 * POST /contacts/{id}/resubscribe: the one way an unsubscribed contact becomes active again, with a stated reason,
 * audited (contact.resubscribed: actor, reason, previous status and unsubscribe time). Only an unsubscribed
 * contact can be re-subscribed (409 otherwise). Suppression entries of the address are separate and stay.
 */
export async function resubscribeContact(deps: ContactDeps, tenantId: string, actor: AuditActor, id: string, reason: string): Promise<ContactView> {
  const text = reason.trim();
  if (text === '' || text.length > RESUBSCRIBE_REASON_MAX) throw validationError('reason', `must be 1 to ${RESUBSCRIBE_REASON_MAX} characters`);
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const current = await requireContact(tx, tenantId, id, { lock: true });
    if (current.status !== 'unsubscribed')
      throw conflict(`only an unsubscribed contact can be re-subscribed; this one is ${current.erased_at ? 'erased' : current.status}`);
    const row = (await markResubscribed(tx, tenantId, id, at))!;
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'contact.resubscribed',
      resourceType: 'contact',
      resourceId: id,
      metadata: { reason: text, previous_status: current.status, unsubscribed_at: current.unsubscribed_at?.toISOString() ?? null },
      at,
    });
    return view(await listCustomFields(tx, tenantId), row);
  });
}

/**
 * PATCH /contacts/{id}: profile columns given (null clears), a new address (normalized; one another contact
 * of the tenant holds, even a deleted one, is 409), status active or unsubscribed, custom_fields merged
 * (a value sets a key, null removes it). A deleted or erased contact cannot be changed (409), nor an
 * unsubscribed one set active (409 naming POST /contacts/{id}/resubscribe).
 */
export async function changeContact(deps: ContactDeps, tenantId: string, id: string, input: ContactInput): Promise<ContactView> {
  if (!isUuid(id)) throw notFound('contact');
  const catalog = await listCustomFields(deps.sql, tenantId);
  const changes = checkContactChanges(catalog, input);
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      const current = await requireContact(tx, tenantId, id, { lock: true });
      if (current.erased_at) throw conflict('this contact was erased: it cannot be changed (add the address again with POST /contacts)');
      if (current.status === 'deleted') throw conflict('this contact is deleted: add the address again with POST /contacts to restore it');
      if (current.status === 'unsubscribed' && changes.status === 'active') throw resubscribeConflict(id);
      if (changes.email === current.email) delete changes.email;
      const nothing =
        changes.email === undefined &&
        changes.status === undefined &&
        Object.keys(changes.profile).length === 0 &&
        Object.keys(changes.customFields.set).length === 0 &&
        changes.customFields.remove.length === 0;
      const row = nothing ? current : (await updateContact(tx, tenantId, id, changes, at))!;
      return view(catalog, row);
    });
  } catch (err) {
    if (isUniqueViolation(err, CONTACT_HASH_KEY)) throw conflict(`another contact of this account has the address ${changes.email}`);
    throw err;
  }
}

/**
 * DELETE /contacts/{id}: status deleted, out of every list; the row stays for history. Deleting twice is fine.
 * An unsubscribed contact's unsubscribe outlives it: the address goes on the suppression list (reason unsubscribe).
 */
export async function deleteContact(deps: ContactDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const current = await requireContact(tx, tenantId, id, { lock: true });
    if (current.status === 'deleted') return;
    if (current.status === 'unsubscribed' && current.email !== null) {
      await suppress(tx, tenantId, { email: current.email, reason: 'unsubscribe', source: 'api', detail: 'the contact was deleted while unsubscribed', at });
    }
    await markContactDeleted(tx, tenantId, id, at);
    await writeAudit(tx, { tenantId, actor, action: 'contact.deleted', resourceType: 'contact', resourceId: id, at });
  });
}

/** What stands in for an erased address in the message log: not an address, the same for every row of the person. */
export function erasedPlaceholder(emailHash: Buffer): string {
  return `erased:${emailHash.toString('hex').slice(0, 12)}`;
}

/**
 * POST /contacts/{id}/erase (GDPR erasure), in one transaction: every personal column of the contact is
 * cleared (status deleted, erased_at set, list memberships removed; the address hash stays), the address's
 * suppression entry becomes hash-only (or one is added) so the person stays suppressed, and the tenant's
 * message log (sends, attempts, events, bounce reports) carries the placeholder instead of the address.
 * The audit row names the contact id only. Erasing twice is fine.
 */
export async function eraseContact(deps: ContactDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const current = await requireContact(tx, tenantId, id, { lock: true });
    const hash = (await contactHash(tx, tenantId, id))!;
    if (current.email !== null) await scrubRecipient(tx, tenantId, current.email, erasedPlaceholder(hash), at);
    await eraseContactRow(tx, tenantId, id, at);
    await eraseSuppression(tx, tenantId, hash, at);
    await writeAudit(tx, { tenantId, actor, action: 'contact.erased', resourceType: 'contact', resourceId: id, at });
  });
}
