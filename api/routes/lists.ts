// Static contact lists of the caller's tenant: create, list, read, rename, delete; add and remove members one at a time or in batches; page members.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import { CONTACT_STATUSES } from '../../shared/audiences/contacts/fields.js';
import type { MemberRow } from '../../shared/audiences/lists/member-queries.js';
import {
  ADD_STATUSES,
  addMember,
  addMembers,
  getMember,
  listMemberPage,
  MAX_BATCH,
  REMOVE_STATUSES,
  removeMember,
  removeMembers,
} from '../../shared/audiences/lists/members.js';
import type { ListRow } from '../../shared/audiences/lists/queries.js';
import { changeList, createList, getList, listListPage, MAX_DESCRIPTION_LENGTH, MAX_NAME_LENGTH, removeList } from '../../shared/audiences/lists/service.js';
import { defineRoute } from '../route.js';
import { cursorPagination, idParam, iso, timestamp } from '../schemas/common.js';

const TAGS = ['Lists'];

const name = z
  .string()
  .max(1000)
  .describe(`1..${MAX_NAME_LENGTH} characters once surrounding spaces are dropped; unique within the account, compared without case`);
const description = z.string().max(10_000).nullable().describe(`At most ${MAX_DESCRIPTION_LENGTH} characters once trimmed; null or blank: none`);

const list = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  member_count: z.number().int().describe('Members of the list (contacts of any status), exact'),
  created_at: timestamp,
  updated_at: timestamp,
});

const contactStatus = z.enum(CONTACT_STATUSES);

const member = z.object({
  id: z.string().describe("The contact's id"),
  email: z.string().nullable().describe("The contact's address; null once the contact was erased"),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  status: contactStatus.describe("The contact's status: deleted contacts can stay members, and sends skip them"),
  added_at: timestamp,
});

const present = (row: ListRow): z.input<typeof list> => ({
  id: row.id,
  name: row.name,
  description: row.description,
  member_count: row.member_count,
  created_at: iso(row.created_at),
  updated_at: iso(row.updated_at),
});

const presentMember = (row: MemberRow): z.input<typeof member> => ({
  id: row.id,
  email: row.email,
  first_name: row.first_name,
  last_name: row.last_name,
  status: row.status,
  added_at: iso(row.added_at),
});

const batchBody = z
  .strictObject({
    contact_ids: z.array(z.string().max(1000)).max(MAX_BATCH).optional().describe('Contact ids'),
    emails: z.array(z.string().max(1000)).max(MAX_BATCH).optional().describe('Contact addresses, looked up trimmed and lower-cased (domain in IDNA form)'),
  })
  .describe(`1..${MAX_BATCH} entries in all, contact_ids and emails together`);

function batchResult<S extends readonly [string, ...string[]]>(statuses: S) {
  const status = z.enum(statuses);
  return z.object({
    results: z
      .array(
        z.object({
          input: z.string().describe('The entry as sent'),
          field: z.enum(['contact_ids', 'emails']).describe('The array the entry came from'),
          contact_id: z.string().nullable().describe('The contact the entry names; null when invalid or not found'),
          status,
          message: z.string().nullable().describe('Why, for invalid, not_found and deleted entries; null otherwise'),
        }),
      )
      .describe('One result per entry, contact_ids first then emails, each in the order sent'),
    totals: z.object(Object.fromEntries(statuses.map((s) => [s, z.number().int()])) as Record<S[number], z.ZodNumber>),
  });
}

const listId = idParam('id');
const memberParams = z.object({ id: z.string().max(64).describe("The list's id"), contactID: z.string().max(64).describe("The contact's id") });

export const listRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/lists',
    auth: 'any',
    scope: 'lists:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List lists',
    description: "The tenant's static contact lists, newest first, each with its exact member_count. Cursor pagination: pass next_cursor as ?after=.",
    query: cursorPagination,
    list: true,
    response: list,
    handler: async ({ principal, query }) => {
      const page = await listListPage(ctx.sql, principal.tenant.id, query);
      return { ...page, items: page.items.map(present) };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/lists',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Create a list',
    description: 'Creates an empty static list. A name the account already uses (in any case) is 409.',
    body: z.strictObject({ name, description: description.optional() }),
    status: 201,
    errors: [409],
    response: list,
    handler: async ({ principal, body, ip }) => present(await createList(ctx, principal.tenant.id, actorOf(principal, ip), body)),
  });

  defineRoute(app, {
    method: 'GET',
    url: '/lists/:id',
    auth: 'any',
    scope: 'lists:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a list',
    description: 'One list with its exact member_count.',
    params: listId,
    errors: [404],
    response: list,
    handler: async ({ principal, params }) => present(await getList(ctx.sql, principal.tenant.id, params.id)),
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/lists/:id',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Rename or describe a list',
    description: 'Changes only the fields given. Renaming to a name the account already uses is 409; a null or blank description removes it.',
    params: listId,
    body: z.strictObject({ name: name.optional(), description: description.optional() }),
    errors: [404, 409],
    response: list,
    handler: async ({ principal, params, body, ip }) => present(await changeList(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body)),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/lists/:id',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete a list',
    description: 'Deletes the list and its memberships; the contacts stay. Its name may be used again.',
    params: listId,
    errors: [404],
    response: z.object({ deleted: z.boolean(), id: z.string() }),
    handler: async ({ principal, params, ip }) => {
      await removeList(ctx, principal.tenant.id, actorOf(principal, ip), params.id);
      return { deleted: true, id: params.id };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/lists/:id/members',
    auth: 'any',
    scope: 'lists:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List members',
    description:
      "The list's members in the order they were added (a member added while you page appears on a later page), each with the " +
      "contact's id, address, name and status. ?status= keeps one contact status. total is the member_count (with ?status=, the " +
      'members of that status). Cursor pagination: pass next_cursor as ?after=.',
    params: listId,
    query: cursorPagination.extend({ status: contactStatus.optional().describe('Only members whose contact has this status') }),
    errors: [404],
    list: true,
    response: member,
    handler: async ({ principal, params, query }) => {
      const page = await listMemberPage(ctx.sql, principal.tenant.id, params.id, query);
      return { ...page, items: page.items.map(presentMember) };
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/lists/:id/members/:contactID',
    auth: 'any',
    scope: 'lists:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'Read a membership',
    description: 'The member, when the contact is in the list; 404 when it is not (or the list or contact is unknown).',
    params: memberParams,
    errors: [404],
    response: member,
    handler: async ({ principal, params }) => presentMember(await getMember(ctx.sql, principal.tenant.id, params.id, params.contactID)),
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/lists/:id/members/:contactID',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Add a contact to a list',
    description:
      'Puts the contact in the list; idempotent: already_member says whether it was there (its added_at is kept). ' +
      "An unknown contact (or another account's) is 404; a deleted contact is 409 (restore it first). To add by address, use the batch.",
    params: memberParams,
    errors: [404, 409],
    response: member.extend({ already_member: z.boolean().describe('True when the contact was in the list before this call') }),
    handler: async ({ principal, params, ip }) => {
      const { member: row, added } = await addMember(ctx, principal.tenant.id, actorOf(principal, ip), params.id, params.contactID);
      return { ...presentMember(row), already_member: !added };
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/lists/:id/members/:contactID',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Remove a contact from a list',
    description: 'Takes the contact out of the list; the contact stays. 404 when it is not in the list.',
    params: memberParams,
    errors: [404],
    response: z.object({ removed: z.boolean(), list_id: z.string(), contact_id: z.string() }),
    handler: async ({ principal, params, ip }) => {
      await removeMember(ctx, principal.tenant.id, actorOf(principal, ip), params.id, params.contactID);
      return { removed: true, list_id: params.id, contact_id: params.contactID };
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/lists/:id/members/batch',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'bulk',
    tags: TAGS,
    summary: 'Add many contacts to a list',
    description:
      `Adds up to ${MAX_BATCH} existing contacts, named by id (contact_ids) or address (emails), in one statement. Answers 200 with one ` +
      'result per entry: added; already_member (also a contact named again in the same call); not_found (no contact of this account: ' +
      'lists never create contacts, imports do); deleted (a deleted contact is not added: restore it first); invalid (not an id, or a ' +
      `malformed address, with a message); and the totals of each. A bad entry never fails the others. More than ${MAX_BATCH} entries is 422.`,
    params: listId,
    body: batchBody,
    errors: [404],
    response: batchResult(ADD_STATUSES),
    handler: async ({ principal, params, body, ip }) => addMembers(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/lists/:id/members/batch-remove',
    auth: 'any',
    scope: 'lists:write',
    rateLimit: 'bulk',
    tags: TAGS,
    summary: 'Remove many contacts from a list',
    description:
      `Removes up to ${MAX_BATCH} contacts, named by id or address, in one statement. Answers 200 with one result per entry: removed; ` +
      'not_member (also a contact named again in the same call); not_found (no contact of this account); invalid; and the totals. ' +
      `More than ${MAX_BATCH} entries is 422.`,
    params: listId,
    body: batchBody,
    errors: [404],
    response: batchResult(REMOVE_STATUSES),
    handler: async ({ principal, params, body, ip }) => removeMembers(ctx, principal.tenant.id, actorOf(principal, ip), params.id, body),
  });
};
