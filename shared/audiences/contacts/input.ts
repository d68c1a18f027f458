// A contact's write payload checked and put in stored form: the address, profile columns, status and custom-field changes.
import { normalizeEmail } from '../../kernel/email.js';
import { validationError } from '../../kernel/errors.js';
import { checkCustomFields, type FieldDefinition, type FieldValue, type ValueSource } from '../custom-fields/values.js';
import { PROFILE_COLUMNS, PROFILE_COLUMN_NAMES, type ContactStatus, type ProfileColumn } from './fields.js';

/** The statuses a write may set: `deleted` is only reached through DELETE (or an erasure). */
export type WritableStatus = Exclude<ContactStatus, 'deleted'>;

export type ProfileValues = Partial<Record<ProfileColumn, string | null>>;

/** Custom-field changes: keys to set to a value, keys to remove. */
export interface CustomFieldChanges {
  set: Record<string, FieldValue>;
  remove: string[];
}

/** One checked contact write: what the upsert and update statements take. */
export interface ContactWrite {
  /** Normalized (shared/kernel/email.ts). */
  email: string;
  /** Only the columns given; null clears one. */
  profile: ProfileValues;
  status?: WritableStatus | undefined;
  customFields: CustomFieldChanges;
}

/** What a client sends: the address, any profile column, status and custom_fields (a null value removes a key). */
export type ContactInput = { email?: string | undefined; status?: string | undefined; custom_fields?: Record<string, unknown> | undefined } & {
  [K in ProfileColumn]?: string | null | undefined;
};

/** IANA zone names as the runtime knows them, canonical case (e.g. europe/paris → Europe/Paris). */
function canonicalZone(zone: string): string | undefined {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

/**
 * One profile column: trimmed, an empty string is null, one line without control characters, within its
 * length cap; timezone must be an IANA zone name.
 */
export function checkProfileValue(column: ProfileColumn, value: string | null, path: string = column): string | null {
  if (value === null) return null;
  const text = value.trim();
  if (text === '') return null;
  if (/[\p{Cc}\u2028\u2029]/u.test(text)) throw validationError(path, 'must be one line without control characters');
  const max = PROFILE_COLUMNS[column];
  if (text.length > max) throw validationError(path, `must be at most ${max} characters`);
  if (column === 'timezone') {
    const zone = canonicalZone(text);
    if (!zone) throw validationError(path, 'must be an IANA time zone name, e.g. Europe/Paris');
    return zone;
  }
  return text;
}

/** The profile columns present in `input`, checked. */
export function checkProfile(input: Partial<Record<string, unknown>>): ProfileValues {
  const out: ProfileValues = {};
  for (const column of PROFILE_COLUMN_NAMES) {
    const value = input[column];
    if (value === undefined) continue;
    if (value !== null && typeof value !== 'string') throw validationError(column, 'must be a string or null');
    out[column] = checkProfileValue(column, value);
  }
  return out;
}

export function checkStatus(status: string): WritableStatus {
  if (status === 'active' || status === 'unsubscribed') return status;
  if (status === 'deleted') throw validationError('status', 'cannot be set to deleted: delete the contact with DELETE /contacts/{id}');
  throw validationError('status', 'must be active or unsubscribed');
}

/**
 * A whole write (create or upsert): the address is required. `creating` demands every required custom
 * field; with it false the custom fields are merged into the stored ones.
 */
export function checkContactWrite(
  catalog: readonly FieldDefinition[],
  input: ContactInput,
  options: { creating: boolean; source?: ValueSource },
): ContactWrite {
  if (input.email === undefined) throw validationError('email', 'is required');
  return {
    email: normalizeEmail(input.email),
    profile: checkProfile(input),
    status: input.status === undefined ? undefined : checkStatus(input.status),
    customFields: checkCustomFields(catalog, input.custom_fields ?? {}, { creating: options.creating, ...(options.source ? { source: options.source } : {}) }),
  };
}

/** A partial change (PATCH): every part optional. */
export interface ContactChanges {
  email?: string | undefined;
  profile: ProfileValues;
  status?: WritableStatus | undefined;
  customFields: CustomFieldChanges;
}

export function checkContactChanges(catalog: readonly FieldDefinition[], input: ContactInput): ContactChanges {
  return {
    email: input.email === undefined ? undefined : normalizeEmail(input.email),
    profile: checkProfile(input),
    status: input.status === undefined ? undefined : checkStatus(input.status),
    customFields: checkCustomFields(catalog, input.custom_fields ?? {}, { creating: false }),
  };
}
