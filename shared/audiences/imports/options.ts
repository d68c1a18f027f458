// An import's options (header mapping, on_existing, list, delimiter) and where each column or key of the file goes: a reserved column, a custom field, or
// nowhere.
import { isReservedName, PROFILE_COLUMNS, type ProfileColumn } from '../contacts/fields.js';
import { validationError } from '../../kernel/errors.js';

export type OnExisting = 'update' | 'skip';

/** Stored in contact_imports.options. */
export interface ImportOptions {
  /** File header (or JSON key) → target; null ignores that column. */
  mapping: Record<string, string | null>;
  on_existing: OnExisting;
  list_id: string | null;
  /** CSV only: the field delimiter (one character). */
  delimiter: string;
}

/** Where one column's values go. */
export type Target = { kind: 'email' } | { kind: 'status' } | { kind: 'profile'; column: ProfileColumn } | { kind: 'custom'; key: string } | { kind: 'ignore' };

const CUSTOM_KEY = /^[a-z][a-z0-9_]{0,49}$/;
const MAPPING_MAX = 500;

const isProfile = (name: string): name is ProfileColumn => Object.hasOwn(PROFILE_COLUMNS, name);

/**
 * A mapping's target, by name: email, status, a profile column, `custom_fields.<key>` or a bare custom-field key.
 * Undefined when it names none of them (a read-only column such as id or created_at included).
 */
export function parseTarget(name: string): Target | undefined {
  if (name === 'email') return { kind: 'email' };
  if (name === 'status') return { kind: 'status' };
  if (isProfile(name)) return { kind: 'profile', column: name };
  const key = name.startsWith('custom_fields.') ? name.slice('custom_fields.'.length) : name;
  if (CUSTOM_KEY.test(key) && !isReservedName(key)) return { kind: 'custom', key };
  return undefined;
}

/** ?mapping= as sent: a JSON object of header → target (or null to ignore the column). */
export function parseMapping(text: string | undefined): Record<string, string | null> {
  if (text === undefined || text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw validationError('mapping', 'must be a JSON object, e.g. {"E-mail Address":"email","Plan":"custom_fields.plan","Notes":null}');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw validationError('mapping', 'must be a JSON object of header → target');
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAPPING_MAX) throw validationError('mapping', `has more than ${MAPPING_MAX} entries`);
  // No prototype: a header named __proto__ is a key like any other.
  const mapping: Record<string, string | null> = Object.create(null) as Record<string, string | null>;
  const targets = new Set<string>();
  for (const [header, target] of entries) {
    if (header.length > 500 || header.includes('\u0000')) throw validationError('mapping', 'headers must be at most 500 characters, without NUL');
    if (target === null) {
      mapping[header] = null;
      continue;
    }
    if (typeof target !== 'string') throw validationError(`mapping.${header}`, 'must be a target name (string) or null to ignore the column');
    const parsed = parseTarget(target);
    if (!parsed) {
      throw validationError(
        `mapping.${header}`,
        `"${target}" is not a writable contact column: use email, status, a reserved column (first_name, …), custom_fields.<key>, or null to ignore`,
      );
    }
    const canonical = targetName(parsed);
    if (targets.has(canonical)) throw validationError(`mapping.${header}`, `maps to ${canonical}, which another header maps to already`);
    targets.add(canonical);
    mapping[header] = canonical;
  }
  return mapping;
}

/** The target as one name: email, status, a profile column, or custom_fields.<key>. */
export function targetName(t: Target): string {
  switch (t.kind) {
    case 'email':
    case 'status':
      return t.kind;
    case 'profile':
      return t.column;
    case 'custom':
      return `custom_fields.${t.key}`;
    case 'ignore':
      return '(ignored)';
  }
}

/** The custom-field keys a mapping names. */
export function mappedCustomKeys(mapping: Record<string, string | null>): string[] {
  return Object.values(mapping).flatMap((t) => {
    const parsed = t === null ? undefined : parseTarget(t);
    return parsed?.kind === 'custom' ? [parsed.key] : [];
  });
}

/** ?delimiter=: one character; `tab` or `\t` for a tab. */
export function parseDelimiter(text: string | undefined): string {
  if (text === undefined || text === '') return ',';
  if (text === 'tab' || text === '\\t') return '\t';
  if ([...text].length !== 1 || /["\r\n\u0000]/.test(text)) throw validationError('delimiter', 'must be one character (not a quote or line break), or "tab"');
  return text;
}

/** A header as it maps itself when the mapping does not name it: trimmed, lower-cased, spaces and dashes as _. */
export function headerAsName(header: string): string {
  return header
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}
