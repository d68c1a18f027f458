// One imported row checked and put in stored form (address, profile columns, status, custom-field changes), or the reason it is invalid.
import { PROFILE_COLUMNS, type ProfileColumn } from '../contacts/fields.js';
import { checkCustomFields, type FieldDefinition, type FieldValue } from '../custom-fields/values.js';
import { normalizeEmail } from '../../kernel/email.js';
import { AppError, validationError } from '../../kernel/errors.js';
import type { ColumnPlan } from './columns.js';
import { resolveName } from './columns.js';

export type ImportStatusValue = 'active' | 'unsubscribed';

/** A valid row, as the batch writer takes it. */
export interface ImportWrite {
  line: number;
  /** Normalized (shared/kernel/email.ts). */
  email: string;
  /** The profile columns the row gives; null clears one. */
  profile: Partial<Record<ProfileColumn, string | null>>;
  /** Null: not given (new contacts are active). */
  status: ImportStatusValue | null;
  /** Custom fields to set. */
  set: Record<string, FieldValue>;
  /** Every custom-field key the row gives (set or removed: an empty value removes the stored one). */
  customKeys: string[];
}

export type CheckedRow = { ok: true; row: ImportWrite } | { ok: false; line: number; reason: string };

/** IANA zone names as the runtime knows them, canonical case (europe/paris → Europe/Paris). */
function canonicalZone(zone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/** A profile value as the contacts API stores it: trimmed, empty is null, one line, within its cap; a timezone is an IANA name. */
export function checkProfileValue(column: ProfileColumn, value: string): string | null {
  const text = value.trim();
  if (text === '') return null;
  if (/[\p{Cc}\u2028\u2029]/u.test(text)) throw validationError(column, 'must be one line without control characters');
  const max = PROFILE_COLUMNS[column];
  if (text.length > max) throw validationError(column, `must be at most ${max} characters`);
  if (column === 'timezone') {
    const zone = canonicalZone(text);
    if (!zone) throw validationError(column, 'must be an IANA time zone name, e.g. Europe/Paris');
    return zone;
  }
  return text;
}

function checkStatusValue(value: string): ImportStatusValue | null {
  const s = value.trim().toLowerCase();
  if (s === '') return null;
  if (s === 'active' || s === 'unsubscribed') return s;
  throw validationError('status', 'must be active or unsubscribed');
}

/** A validation failure's message is the reason; anything else is a bug and is thrown on. */
function reasonOf(err: unknown): string {
  if (err instanceof AppError) return err.message;
  throw err;
}

/** PostgreSQL text cannot hold NUL: such a row is invalid rather than a failed batch. */
const hasNul = (text: string) => text.includes('\u0000');

/** A CSV record against the file's column plan. */
export function checkCsvRow(plan: ColumnPlan, catalog: readonly FieldDefinition[], line: number, cells: string[]): CheckedRow {
  if (cells.length !== plan.targets.length) {
    return { ok: false, line, reason: `has ${cells.length} field${cells.length === 1 ? '' : 's'}, the header has ${plan.targets.length}` };
  }
  try {
    let email: string | undefined;
    const profile: ImportWrite['profile'] = {};
    let status: ImportStatusValue | null = null;
    // No prototype: a key named __proto__ is checked (and refused) like any other.
    const custom: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (let i = 0; i < cells.length; i++) {
      const target = plan.targets[i]!;
      if (target.kind === 'ignore') continue;
      const cell = cells[i]!;
      if (hasNul(cell)) return { ok: false, line, reason: 'contains a NUL character' };
      if (target.kind === 'email') email = normalizeEmail(cell);
      else if (target.kind === 'profile') profile[target.column] = checkProfileValue(target.column, cell);
      else if (target.kind === 'status') status = checkStatusValue(cell);
      else custom[target.key] = cell;
    }
    const changes = checkCustomFields(catalog, custom, { creating: false, source: 'text' });
    return { ok: true, row: { line, email: email!, profile, status, set: changes.set, customKeys: plan.customKeys } };
  } catch (err) {
    return { ok: false, line, reason: reasonOf(err) };
  }
}

/** A JSON value given for a text column: strings as they are, numbers and booleans as text, null clears. */
function textOf(value: unknown, field: string): string {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw validationError(field, 'must be a string');
}

/**
 * An NDJSON object: keys resolve like CSV headers (mapping, then their own name); `custom_fields` may hold an object
 * of catalog keys. An unknown key makes the row invalid; read-only columns (id, created_at, …) are ignored.
 */
export function checkJsonRow(
  mapping: Record<string, string | null>,
  catalog: readonly FieldDefinition[],
  catalogKeys: ReadonlySet<string>,
  line: number,
  value: Record<string, unknown>,
): CheckedRow {
  try {
    let email: string | undefined;
    const profile: ImportWrite['profile'] = {};
    let status: ImportStatusValue | null = null;
    // No prototype: a key named __proto__ is checked (and refused) like any other.
    const custom: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [key, raw] of Object.entries(value)) {
      if (key === 'custom_fields' && !Object.hasOwn(mapping, key)) {
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw validationError('custom_fields', 'must be an object');
        for (const [k, v] of Object.entries(raw as Record<string, unknown>)) custom[k] = v;
        continue;
      }
      const target = resolveName(key, mapping, catalogKeys);
      if (target.kind === 'unknown') throw validationError(key, 'is neither a contact column nor a custom field');
      if (target.kind === 'not_in_catalog') throw validationError(`custom_fields.${target.key}`, 'is not a field of the custom-field catalog');
      if (target.kind === 'ignore') continue;
      if (typeof raw === 'string' && hasNul(raw)) return { ok: false, line, reason: `${key}: contains a NUL character` };
      if (target.kind === 'email') {
        if (typeof raw !== 'string') throw validationError('email', 'must be a string');
        email = normalizeEmail(raw);
      } else if (target.kind === 'profile') profile[target.column] = checkProfileValue(target.column, textOf(raw, key));
      else if (target.kind === 'status') status = checkStatusValue(textOf(raw, key));
      else custom[target.key] = raw;
    }
    if (email === undefined) throw validationError('email', 'is required');
    for (const v of Object.values(custom))
      if (typeof v === 'string' && hasNul(v)) return { ok: false, line, reason: 'custom_fields: contains a NUL character' };
    const changes = checkCustomFields(catalog, custom, { creating: false, source: 'text' });
    return { ok: true, row: { line, email, profile, status, set: changes.set, customKeys: [...Object.keys(changes.set), ...changes.remove] } };
  } catch (err) {
    return { ok: false, line, reason: reasonOf(err) };
  }
}
