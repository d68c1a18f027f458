// The caller's contacts: list and search, create (or upsert), read, change, delete, erase (GDPR), and the lists a contact is in.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { CONTACT_STATUSES, PROFILE_COLUMNS, PROFILE_COLUMN_NAMES, type ProfileColumn } from '../../shared/audiences/contacts/fields.js';
import {
  changeContact,
  createContact,
  deleteContact,
  eraseContact,
  getContact,
  listContactPage,
  RESUBSCRIBE_REASON_MAX,
  resubscribeContact,
  SEARCH_COUNT_CAP,
  type ContactView,
} from '../../shared/audiences/contacts/service.js';
import { listContactListPage } from '../../shared/audiences/lists/members.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, pagination, queryFlag, statusResult, timestamp } from '../schemas/common.js';

const TAGS = ['Contacts'];

const profileOut = Object.fromEntries(PROFILE_COLUMN_NAMES.map((c) => [c, z.string().nullable()])) as Record<ProfileColumn, z.ZodNullable<z.ZodString>>;

const contact = z.object({
  id: z.string(),
  tenant_id: z.string(),
  email: z.string().nullable().describe('Trimmed, lower-cased, the domain in its ASCII (IDNA) form; null once erased'),
  ...profileOut,
  status: z.enum(CONTACT_STATUSES).describe('active, unsubscribed (never mailed, transactional mail included) or deleted'),
  custom_fields: z.record(z.string(), z.unknown()).describe('Values of the fields in the custom-field catalog, keyed by their key'),
  best_send_hour: z.number().int().nullable().describe('0..23 UTC, the hour of most opens; read-only, filled by a background job'),
  unsubscribed_at: timestamp.nullable().describe('When the status became unsubscribed; null otherwise'),
  erased_at: timestamp.nullable().describe('When the contact was erased (POST /contacts/{id}/erase); null otherwise'),
  created_at: timestamp,
  updated_at: timestamp,
});

const present = (c: ContactView): z.input<typeof contact> => ({
  ...c,
  unsubscribed_at: iso(c.unsubscribed_at),
  erased_at: iso(c.erased_at),
  created_at: iso(c.created_at),
  updated_at: iso(c.updated_at),
});

const profileIn = Object.fromEntries(
  PROFILE_COLUMN_NAMES.map((c) => [
    c,
    z
      .string()
      .max(PROFILE_COLUMNS[c] + 100)
      .nullable()
      .optional()
      .describe(`At most ${PROFILE_COLUMNS[c]} characters, one line; empty or null clears it`),
  ]),
) as Record<ProfileColumn, z.ZodOptional<z.ZodNullable<z.ZodString>>>;

const email = z.string().max(1000).describe('An address local@domain; stored trimmed and lower-cased with the domain in IDNA (ASCII) form, unique per account');
const status = z.enum(CONTACT_STATUSES).describe('active or unsubscribed (deleted only through DELETE). Becoming unsubscribed stamps unsubscribed_at');
const customFields = z
  .record(z.string(), z.unknown())
  .describe("Values keyed by the catalog's keys, checked against each field's type (422 naming the key); null removes a value");

const WRITE_NOTE =
  'Profile columns: ' +
  PROFILE_COLUMN_NAMES.join(', ') +
  ' (strings, trimmed; timezone an IANA zone name). best_send_hour is read-only ' +
  '(400 unexpected field). custom_fields keys must be in the custom-field catalog; required fields must be given when a contact is created ' +
  'and can never be removed.';

const contactId = idParam('id');

const contactList = z.object({
  id: z.string().describe("The list's id"),
  name: z.string().describe("The list's name"),
  added_at: timestamp.describe('When the contact was added to the list'),
});

export const contactRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/contacts',
    auth: 'any',
    scope: 'contacts:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List contacts',
    description:
      "The tenant's contacts, newest first. status: active, unsubscribed, deleted or all (default: active and unsubscribed). q: text the " +
      'address contains (lower-cased; % and _ are plain characters). limit (1..200, default 50) and offset page the list. total is exact ' +
      `without q; with q matches are counted up to ${SEARCH_COUNT_CAP.toLocaleString('en-US')}, and total_is_capped is true when there are more.`,
    query: pagination.extend({
      q: z.string().max(254).optional().describe('Lower-case text the address contains; blank = all'),
      status: z
        .enum([...CONTACT_STATUSES, 'all'])
        .optional()
        .describe('Default: active and unsubscribed (deleted excluded)'),
    }),
    response: z.object({
      items: z.array(contact),
      total: z.number().int(),
      total_is_capped: z.boolean().describe(`True when a search matched more than ${SEARCH_COUNT_CAP} contacts: total is then ${SEARCH_COUNT_CAP}`),
      limit: z.number().int(),
      offset: z.number().int(),
    }),
    handler: async ({ principal, query }) => {
      const page = await ctx.queries.run(principal.tenant.id, 'contact_search', (tx) => listContactPage(tx, principal.tenant.id, query));
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/contacts',
    auth: 'any',
    scope: 'contacts:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Create a contact',
    description:
      'Adds a contact (201, created true). An address a contact of the account already has is 409, unless ?upsert=true: then that contact ' +
      'is updated (200, created false): the profile columns given change, status when given, custom_fields are merged. The address of a ' +
      'deleted or erased contact can be added again: that contact is made anew (same id, fields replaced; 201, created true). An upsert ' +
      'never re-subscribes: status active for an unsubscribed contact is 409 (use POST /contacts/{id}/resubscribe). An erased ' +
      `person stays on the suppression list until that entry is lifted by hand (DELETE /suppressions/{id}?email=). ${WRITE_NOTE}`,
    query: z.object({ upsert: queryFlag.optional().describe('true: update the existing contact of this address instead of answering 409') }),
    body: z.strictObject({ email, ...profileIn, status: status.optional(), custom_fields: customFields.optional() }),
    status: 201,
    errors: [409],
    response: contact.extend({ created: z.boolean().describe('true: a new contact (201); false: an existing one updated (200)') }),
    handler: async ({ principal, query, body, reply }) => {
      const result = await createContact(ctx, principal.tenant.id, body, { upsert: query.upsert ?? false });
      if (!result.created) reply.code(200);
      return { ...present(result.contact), created: result.created };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/contacts/:id',
    auth: 'any',
    scope: 'contacts:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a contact',
    description: 'One contact with every reserved column and its custom fields (values of deleted catalog fields are not shown).',
    params: contactId,
    errors: [404],
    response: contact,
    handler: async ({ principal, params }) => present(await getContact(ctx.sql, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/contacts/:id',
    auth: 'any',
    scope: 'contacts:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Update a contact',
    description:
      'Changes only the fields given. email is normalized again; an address another contact of the account has (even a deleted one) is 409. ' +
      'status active or unsubscribed (setting unsubscribed stamps unsubscribed_at). An unsubscribed contact cannot be set active here ' +
      '(409): re-subscribing is POST /contacts/{id}/resubscribe, with a reason. custom_fields are merged: a key with ' +
      `a value sets it, null removes it. A deleted or erased contact cannot be changed (409). ${WRITE_NOTE}`,
    params: contactId,
    body: z.strictObject({ email: email.optional(), ...profileIn, status: status.optional(), custom_fields: customFields.optional() }),
    errors: [404, 409],
    response: contact,
    handler: async ({ principal, params, body }) => present(await changeContact(ctx, principal.tenant.id, params.id, body)),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/contacts/:id',
    auth: 'any',
    scope: 'contacts:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete a contact',
    description:
      'Sets the status to deleted and takes the contact out of every list. The row stays (GET /contacts?status=deleted), so its history ' +
      "and suppressions keep working; adding the address again restores it. To remove the person's data, erase the contact instead.",
    params: contactId,
    errors: [404],
    response: statusResult,
    handler: async ({ principal, params, ip }) => {
      await deleteContact(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { status: 'deleted' };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/contacts/:id/erase',
    auth: 'any',
    scope: 'contacts:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Erase a contact (GDPR)',
    description:
      "Removes the person's data for good: the address, every profile column and custom field are cleared, status becomes deleted, " +
      "erased_at is set and the contact leaves every list; only a SHA-256 hash of the address is kept. The address's suppression entry " +
      'keeps only that hash (reason erased), or one is added, so mail to the address is still dropped. In the message log (sends, ' +
      'events) the address becomes erased:<12 hex digits>, and the stored messages and subjects are dropped; sends still waiting are ' +
      'dropped. Audited as contact.erased with the contact id only. Cannot be undone.',
    params: contactId,
    errors: [404],
    response: statusResult,
    handler: async ({ principal, params, ip }) => {
      await eraseContact(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { status: 'erased' };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/contacts/:id/resubscribe',
    auth: 'any',
    scope: 'contacts:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Re-subscribe an unsubscribed contact',
    description:
      'The one way an unsubscribed contact becomes active again (PATCH, upserts and imports never do it): the person asked to be mailed ' +
      'again, and reason says how that consent was given. Sets status active and clears unsubscribed_at; audited as contact.resubscribed ' +
      'with the caller, the reason, the previous status and when the person had unsubscribed. A contact that is not unsubscribed is 409. ' +
      'Suppression entries of the address are separate and stay until lifted (DELETE /suppressions/{id}).',
    params: contactId,
    body: z.strictObject({
      reason: z
        .string()
        .trim()
        .min(1)
        .max(RESUBSCRIBE_REASON_MAX)
        .describe(`Why the person may be mailed again (their consent), 1..${RESUBSCRIBE_REASON_MAX} characters`),
    }),
    errors: [404, 409],
    response: contact,
    handler: async ({ principal, params, body, ip }) =>
      present(await resubscribeContact(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body.reason)),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/contacts/:id/lists',
    auth: 'any',
    // Both: the answer is the contact's memberships and the lists' names, what GET /lists/{id}/members shows from the other side.
    scope: ['contacts:read', 'lists:read'],
    rateLimit: 'read',
    tags: TAGS,
    summary: "List a contact's lists",
    description:
      "Not in the spec (an extension for the dashboard's contact page; the spec pages a list's members only from the list's side): " +
      'the static lists the contact is a member of, in the order it was added to them (a list it joins while you page appears on a ' +
      'later page), each with its id, name and added_at. total is the number of such lists. An unknown contact, or one of another ' +
      'account, is 404. Cursor pagination: pass next_cursor as ?after=.',
    params: contactId,
    query: cursorPagination,
    errors: [404],
    list: true,
    response: contactList,
    handler: async ({ principal, params, query }) => {
      const page = await listContactListPage(ctx.sql, principal.tenant.id, params.id, query);
      return { ...page, items: page.items.map((l) => ({ id: l.id, name: l.name, added_at: iso(l.added_at) })) };
    },
  });
};
