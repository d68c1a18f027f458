// The caller's custom-field catalog: list, create, change (key and type immutable), delete.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { actorOf } from '../../shared/accounts/auth/principal.js';
import type { CustomFieldRow } from '../../shared/audiences/custom-fields/queries.js';
import {
  changeField,
  createField,
  listFields,
  MAX_CUSTOM_FIELDS,
  MAX_LABEL_LENGTH,
  MAX_OPTION_LENGTH,
  MAX_OPTIONS,
  MAX_POSITION,
  removeField,
} from '../../shared/audiences/custom-fields/service.js';
import { FIELD_TYPES } from '../../shared/audiences/custom-fields/values.js';
import { defineRoute } from '../route.js';
import { idParam, iso, statusResult, timestamp } from '../schemas/common.js';

const TAGS = ['Contacts'];

const TYPE_NOTE =
  'Stored forms: text (one line, at most 1,000 characters), longtext (at most 65,536), number (a JSON number), date (YYYY-MM-DD), ' +
  'datetime (RFC 3339 with a zone, stored as UTC ISO), boolean, select (one of options), email (normalized like contact addresses), ' +
  'url (absolute http or https), phone (digits with an optional +, spaces, dots, dashes, parentheses).';

const type = z.enum(FIELD_TYPES).describe(`Immutable. ${TYPE_NOTE}`);
const options = z
  .array(z.string().max(MAX_OPTION_LENGTH))
  .max(MAX_OPTIONS)
  .nullable()
  .describe(`select only, and required for it: 1..${MAX_OPTIONS} distinct values (trimmed), each at most ${MAX_OPTION_LENGTH} characters`);

const field = z.object({
  id: z.string(),
  key: z.string().describe("The name values are stored under in a contact's custom_fields; immutable"),
  label: z.string(),
  type: z.enum(FIELD_TYPES),
  options: z.array(z.string()).nullable().describe("A select field's options; null for other types"),
  required: z.boolean().describe('Every new contact must have a value, and no contact can remove its value'),
  position: z.number().int().describe('Display order: ascending, ties by creation'),
  created_at: timestamp,
  updated_at: timestamp,
});

const present = (f: CustomFieldRow): z.input<typeof field> => ({
  id: f.id,
  key: f.key,
  label: f.label,
  type: f.type,
  options: f.options,
  required: f.required,
  position: f.position,
  created_at: iso(f.created_at),
  updated_at: iso(f.updated_at),
});

const fieldId = idParam('fieldID');

export const contactCustomFieldRoutes: FastifyPluginAsyncZod = async (app) => {
  const { ctx } = app;
  defineRoute(app, {
    method: 'GET',
    url: '/contact-custom-fields',
    auth: 'any',
    scope: 'contacts:read',
    rateLimit: 'read',
    tags: TAGS,
    summary: 'List custom fields',
    description: "The tenant's custom-field catalog in display order (position, then creation).",
    response: z.object({ items: z.array(field) }),
    handler: async ({ principal }) => ({ items: (await listFields(ctx.sql, principal.tenant.id)).map(present) }),
  });

  defineRoute(app, {
    method: 'POST',
    url: '/contact-custom-fields',
    auth: 'any',
    scope: 'contacts:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Create a custom field',
    description:
      'Adds a field at the end of the catalog. key matches ^[a-z][a-z0-9_]{0,49}$ and is not a reserved contact column (422); a key ' +
      `already used is 409, as is a catalog already holding ${MAX_CUSTOM_FIELDS} fields. A select field needs options (422 without); other ` +
      'types take none. Values a deleted field of the same key left in contacts are dropped: the new field starts empty.',
    body: z.strictObject({
      key: z.string().max(100),
      label: z.string().max(MAX_LABEL_LENGTH).describe(`1..${MAX_LABEL_LENGTH} characters, one line (trimmed)`),
      type,
      options: options.optional(),
      required: z.boolean().optional().describe('Default false'),
    }),
    status: 201,
    errors: [409],
    response: field,
    handler: async ({ principal, body, ip }) => present(await createField(ctx, principal.tenant.id, actorOf(principal, ip), body)),
  });

  defineRoute(app, {
    method: 'PUT',
    url: '/contact-custom-fields/:fieldID',
    auth: 'any',
    scope: 'contacts:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Change a custom field',
    description:
      'Changes the attributes given: label, options (select fields only, never empty), required, position. key and type are immutable: ' +
      'naming them with another value is 422 ("key is immutable" / "type is immutable"); the field\'s own value is accepted. ' +
      'Values already stored are kept as they are, also when an option they hold is removed or the field becomes required ' +
      '(required applies to new contacts and to removing a value).',
    params: fieldId,
    body: z.strictObject({
      label: z.string().max(MAX_LABEL_LENGTH).optional(),
      options: options.optional(),
      required: z.boolean().optional(),
      position: z.number().int().min(0).max(MAX_POSITION).optional().describe(`0..${MAX_POSITION}`),
      key: z.string().max(100).optional().describe("Immutable: only the field's own key is accepted"),
      type: z.string().max(100).optional().describe("Immutable: only the field's own type is accepted"),
    }),
    errors: [404],
    response: field,
    handler: async ({ principal, params, body, ip }) => present(await changeField(ctx, principal.tenant.id, actorOf(principal, ip), params.fieldID, body)),
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/contact-custom-fields/:fieldID',
    auth: 'any',
    scope: 'contacts:write',
    rateLimit: 'write',
    tags: TAGS,
    summary: 'Delete a custom field',
    description:
      'Removes the field from the catalog. Values stored in contacts are not touched: they are orphaned and ignored (no longer shown ' +
      'or validated) until a new field reuses the key, which clears them.',
    params: fieldId,
    errors: [404],
    response: statusResult,
    handler: async ({ principal, params, ip }) => {
      await removeField(ctx, principal.tenant.id, actorOf(principal, ip), params.fieldID);
      return { status: 'deleted' };
    },
  });
};
