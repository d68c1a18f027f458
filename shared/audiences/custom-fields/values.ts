// Custom-field values checked against the catalog: each type's rule, the stored (JSON) form, and which stored values still count.
import { isCalendarDate } from '../../kernel/calendar-date.js';
import { normalizeEmail } from '../../kernel/email.js';
import { validationError } from '../../kernel/errors.js';

export const FIELD_TYPES = ['text', 'longtext', 'number', 'date', 'datetime', 'boolean', 'select', 'email', 'url', 'phone'] as const;
export type FieldType = (typeof FIELD_TYPES)[number];

/** What value checks need of a catalog entry. */
export interface FieldDefinition {
  key: string;
  type: FieldType;
  options: string[] | null;
  required: boolean;
}

/** A stored value: JSON scalars only (dates and datetimes as ISO strings). */
export type FieldValue = string | number | boolean;

export const TEXT_MAX = 1_000;
export const LONGTEXT_MAX = 65_536;
export const URL_MAX = 2_048;

/** RFC 3339 date-time with a zone (Z or ±hh:mm); fractions allowed. */
const DATETIME = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;
const PHONE = /^\+?[0-9][0-9 ().-]{1,30}[0-9]$/;
const TRUE_WORDS = new Set(['true', '1', 'yes', 'y']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'n']);

/**
 * How strings are read: `json` values come typed from a JSON body (a number must be a JSON number);
 * `text` values come from a CSV cell, where everything is a string ("42", "true", "2026-01-31").
 */
export type ValueSource = 'json' | 'text';

/** Checks one value for `field` and returns its stored form; throws 422 naming `path`. */
export function checkValue(field: FieldDefinition, value: unknown, path: string, source: ValueSource = 'json'): FieldValue {
  const fail = (problem: string): never => {
    throw validationError(path, problem);
  };
  const text = (): string => (typeof value === 'string' ? value : fail(`must be a string (${field.type})`));
  switch (field.type) {
    case 'text': {
      const s = text();
      if (/[\r\n]/.test(s)) fail('must be one line (use a longtext field for more)');
      return s.length > TEXT_MAX ? fail(`is longer than ${TEXT_MAX} characters`) : s;
    }
    case 'longtext': {
      const s = text();
      return s.length > LONGTEXT_MAX ? fail(`is longer than ${LONGTEXT_MAX} characters`) : s;
    }
    case 'number': {
      const n =
        typeof value === 'number'
          ? value
          : source === 'text' && typeof value === 'string' && /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(value.trim())
            ? Number(value.trim())
            : NaN;
      if (typeof value !== 'number' && source === 'json') fail('must be a number');
      return Number.isFinite(n) ? n : fail('must be a finite number');
    }
    case 'boolean': {
      if (typeof value === 'boolean') return value;
      if (source === 'text' && typeof value === 'string') {
        const word = value.trim().toLowerCase();
        if (TRUE_WORDS.has(word)) return true;
        if (FALSE_WORDS.has(word)) return false;
      }
      return fail(source === 'text' ? 'must be true or false (also 1/0, yes/no)' : 'must be true or false');
    }
    case 'date': {
      const s = text().trim();
      return isCalendarDate(s) ? s : fail('must be a date YYYY-MM-DD');
    }
    case 'datetime': {
      const s = text().trim();
      const at = DATETIME.test(s) && isCalendarDate(s.slice(0, 10)) ? new Date(s.replace(' ', 'T')) : undefined;
      return at && !Number.isNaN(at.getTime()) ? at.toISOString() : fail('must be an RFC 3339 date-time with a time zone, e.g. 2026-01-31T09:30:00Z');
    }
    case 'select': {
      const s = text();
      return field.options?.includes(s) ? s : fail(`must be one of ${(field.options ?? []).map((o) => JSON.stringify(o)).join(', ')}`);
    }
    case 'email':
      return normalizeEmail(text(), path);
    case 'url': {
      const s = text().trim();
      if (s.length > URL_MAX) fail(`is longer than ${URL_MAX} characters`);
      let url: URL | undefined;
      try {
        url = new URL(s);
      } catch {
        url = undefined;
      }
      return url && (url.protocol === 'https:' || url.protocol === 'http:') && url.hostname ? s : fail('must be an absolute http(s) URL');
    }
    case 'phone': {
      const s = text().trim();
      return PHONE.test(s) ? s : fail('must be a phone number: digits, optionally a leading + and spaces, dots, dashes or parentheses');
    }
  }
}

/**
 * Checks a custom_fields object against the catalog and returns the stored changes: a key with a
 * value sets it, `null` (or, from text, an empty cell) removes it. Unknown keys are 422; with
 * `creating`, every required field must be given; a required field can never be removed.
 */
export function checkCustomFields(
  catalog: readonly FieldDefinition[],
  input: Record<string, unknown>,
  options: { creating: boolean; source?: ValueSource; path?: string },
): { set: Record<string, FieldValue>; remove: string[] } {
  const path = options.path ?? 'custom_fields';
  const byKey = new Map(catalog.map((f) => [f.key, f]));
  const set: Record<string, FieldValue> = {};
  const remove: string[] = [];
  for (const [key, value] of Object.entries(input)) {
    const field = byKey.get(key);
    if (!field) throw validationError(`${path}.${key}`, 'is not a field of the custom-field catalog (define it under /contact-custom-fields)');
    const empty = value === null || value === undefined || (options.source === 'text' && typeof value === 'string' && value.trim() === '');
    if (empty) {
      if (field.required) throw validationError(`${path}.${key}`, 'is required');
      remove.push(key);
      continue;
    }
    set[key] = checkValue(field, value, `${path}.${key}`, options.source);
  }
  if (options.creating) {
    for (const field of catalog) {
      if (field.required && !(field.key in set)) throw validationError(`${path}.${field.key}`, 'is required');
    }
  }
  return { set, remove };
}

/** The values that count: those of fields still in the catalog (a deleted field's values stay stored, ignored everywhere). */
export function visibleCustomFields(catalog: readonly Pick<FieldDefinition, 'key'>[], stored: Record<string, unknown>): Record<string, unknown> {
  const visible: Record<string, unknown> = {};
  for (const { key } of catalog) if (key in stored) visible[key] = stored[key];
  return visible;
}
