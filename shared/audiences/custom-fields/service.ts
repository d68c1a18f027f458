// The tenant's custom-field catalog (/contact-custom-fields): create, list, change (key and type immutable), delete.
import { writeAudit, type AuditActor } from '../../operations/audit/log.js';
import type { Clock } from '../../kernel/clock.js';
import { isReservedName } from '../contacts/fields.js';
import type { Queryable, Sql } from '../../db/connection.js';
import { conflict, isUniqueViolation, notFound, validationError } from '../../kernel/errors.js';
import { isUuid } from '../../kernel/ids.js';
import {
  clearStoredValues,
  CUSTOM_FIELD_KEY,
  deleteCustomField,
  findCustomField,
  insertCustomField,
  listCustomFields,
  nextPosition,
  updateCustomField,
  type CustomFieldChange,
  type CustomFieldRow,
} from './queries.js';
import type { FieldType } from './values.js';

export interface CustomFieldDeps {
  sql: Sql;
  clock: Clock;
}

/** A tenant's catalog holds at most this many fields: every contact read and segment rule walks it. */
export const MAX_CUSTOM_FIELDS = 100;
export const MAX_LABEL_LENGTH = 200;
export const MAX_OPTIONS = 500;
export const MAX_OPTION_LENGTH = 200;
export const MAX_POSITION = 1_000_000;

const KEY = /^[a-z][a-z0-9_]{0,49}$/;

/** Arbitrary constant naming the per-tenant catalog lock among advisory locks (the field cap is counted under it). */
const CATALOG_LOCK_CLASS = 74_615_014;

export interface NewField {
  key: string;
  label: string;
  type: FieldType;
  options?: string[] | null | undefined;
  required?: boolean | undefined;
}

export interface FieldChanges {
  label?: string | undefined;
  options?: string[] | null | undefined;
  required?: boolean | undefined;
  position?: number | undefined;
  /** Accepted only with the field's own value: key and type never change. */
  key?: string | undefined;
  type?: string | undefined;
}

function checkLabel(label: string): string {
  const text = label.trim();
  if (!text) throw validationError('label', 'must not be blank');
  if (/[\r\n]/.test(text)) throw validationError('label', 'must be one line');
  if (text.length > MAX_LABEL_LENGTH) throw validationError('label', `must be at most ${MAX_LABEL_LENGTH} characters`);
  return text;
}

/** Options of a select field: 1..MAX_OPTIONS distinct, non-blank strings (trimmed); other types take none. */
function checkOptions(type: FieldType, options: string[] | null | undefined): string[] | null {
  if (type !== 'select') {
    if (options !== undefined && options !== null) throw validationError('options', `only a select field has options (this one is ${type})`);
    return null;
  }
  if (!options || options.length === 0) throw validationError('options', 'a select field needs at least one option');
  if (options.length > MAX_OPTIONS) throw validationError('options', `at most ${MAX_OPTIONS} options`);
  const out: string[] = [];
  for (const [i, raw] of options.entries()) {
    const option = raw.trim();
    if (!option) throw validationError(`options.${i}`, 'must not be blank');
    if (/[\r\n]/.test(option)) throw validationError(`options.${i}`, 'must be one line');
    if (option.length > MAX_OPTION_LENGTH) throw validationError(`options.${i}`, `must be at most ${MAX_OPTION_LENGTH} characters`);
    if (out.includes(option)) throw validationError(`options.${i}`, `repeats ${JSON.stringify(option)}`);
    out.push(option);
  }
  return out;
}

function checkKey(key: string): string {
  if (!KEY.test(key)) throw validationError('key', 'must start with a lower-case letter and hold only a-z, 0-9 and _ (at most 50 characters)');
  if (isReservedName(key)) throw validationError('key', `"${key}" is a reserved contact column`);
  return key;
}

const duplicateKey = (key: string) => conflict(`a custom field with key "${key}" already exists`);

/** The tenant's catalog in display order (position, then creation). */
export async function listFields(db: Queryable, tenantId: string): Promise<CustomFieldRow[]> {
  return listCustomFields(db, tenantId);
}

/**
 * Adds a field at the end of the catalog; 409 for a key already used or a full catalog. Values a deleted
 * field of the same key left in contacts are dropped first: the new field starts empty.
 */
export async function createField(deps: CustomFieldDeps, tenantId: string, actor: AuditActor, input: NewField): Promise<CustomFieldRow> {
  const key = checkKey(input.key);
  const label = checkLabel(input.label);
  const options = checkOptions(input.type, input.options);
  const at = deps.clock.now();
  try {
    return await deps.sql.begin(async (tx) => {
      // Serializes this tenant's creations so the cap holds under concurrency.
      await tx`select pg_advisory_xact_lock(${CATALOG_LOCK_CLASS}, hashtext(${tenantId}))`;
      const existing = await listCustomFields(tx, tenantId);
      if (existing.some((f) => f.key === key)) throw duplicateKey(key);
      if (existing.length >= MAX_CUSTOM_FIELDS)
        throw conflict(`the catalog already holds ${MAX_CUSTOM_FIELDS} fields, the most a tenant may have; delete one first`);
      await clearStoredValues(tx, tenantId, key);
      const row = await insertCustomField(
        tx,
        tenantId,
        { key, label, type: input.type, options, required: input.required ?? false, position: await nextPosition(tx, tenantId) },
        at,
      );
      await writeAudit(tx, {
        tenantId,
        actor,
        action: 'custom_field.created',
        resourceType: 'custom_field',
        resourceId: row.id,
        metadata: { key, type: row.type },
        at,
      });
      return row;
    });
  } catch (err) {
    if (isUniqueViolation(err, CUSTOM_FIELD_KEY)) throw duplicateKey(key);
    throw err;
  }
}

/**
 * Changes label, options, required and position. key and type are immutable: naming them with another
 * value is 422, with the field's own value it is accepted (a client may send back what it read).
 * A select field's options stay non-empty; values already stored keep their value even when an option goes.
 */
export async function changeField(deps: CustomFieldDeps, tenantId: string, actor: AuditActor, id: string, changes: FieldChanges): Promise<CustomFieldRow> {
  if (!isUuid(id)) throw notFound('custom field');
  const at = deps.clock.now();
  return deps.sql.begin(async (tx) => {
    const current = await findCustomField(tx, tenantId, id);
    if (!current) throw notFound('custom field');
    if (changes.key !== undefined && changes.key !== current.key) throw validationError('key', 'is immutable');
    if (changes.type !== undefined && changes.type !== current.type) throw validationError('type', 'is immutable');
    const change: CustomFieldChange = {};
    if (changes.label !== undefined) change.label = checkLabel(changes.label);
    if (changes.options !== undefined) change.options = checkOptions(current.type, changes.options);
    if (changes.required !== undefined) change.required = changes.required;
    if (changes.position !== undefined) {
      if (!Number.isInteger(changes.position) || changes.position < 0 || changes.position > MAX_POSITION) {
        throw validationError('position', `must be an integer from 0 to ${MAX_POSITION}`);
      }
      change.position = changes.position;
    }
    const fields = Object.keys(change);
    if (fields.length === 0) return current;
    const row = (await updateCustomField(tx, tenantId, id, change, at))!;
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'custom_field.updated',
      resourceType: 'custom_field',
      resourceId: id,
      metadata: { key: row.key, fields },
      at,
    });
    return row;
  });
}

/** Removes the catalog entry; contacts keep the stored values, which are ignored from now on (visibleCustomFields). */
export async function removeField(deps: CustomFieldDeps, tenantId: string, actor: AuditActor, id: string): Promise<void> {
  if (!isUuid(id)) throw notFound('custom field');
  const at = deps.clock.now();
  await deps.sql.begin(async (tx) => {
    const current = await findCustomField(tx, tenantId, id);
    if (!current || !(await deleteCustomField(tx, tenantId, id))) throw notFound('custom field');
    await writeAudit(tx, {
      tenantId,
      actor,
      action: 'custom_field.deleted',
      resourceType: 'custom_field',
      resourceId: id,
      metadata: { key: current.key },
      at,
    });
  });
}
