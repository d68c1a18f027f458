// Where a file's columns go: the CSV header (or each JSON key) resolved through the mapping, then by its own name, against the custom-field catalog.
import { isReservedName, type ProfileColumn } from '../contacts/fields.js';
import { headerAsName, parseTarget, targetName, type Target } from './options.js';

/** The CSV file's columns, resolved once from its header. */
export interface ColumnPlan {
  /** One target per column, in file order. */
  targets: Target[];
  /** The profile columns, custom-field keys and status the file writes: every row gives all of them. */
  profile: ProfileColumn[];
  customKeys: string[];
  status: boolean;
}

/**
 * One name's target: the mapping's entry when it has one (null = ignored), else the name itself (trimmed,
 * lower-cased, spaces and dashes as _) when it is email, status, a reserved column or a catalog key. A reserved
 * column a client cannot write (id, created_at, …) is ignored. `unknown` when nothing matches; `not_in_catalog`
 * when a custom field is named that the catalog lacks.
 */
export function resolveName(
  name: string,
  mapping: Record<string, string | null>,
  catalogKeys: ReadonlySet<string>,
): Target | { kind: 'unknown' } | { kind: 'not_in_catalog'; key: string } {
  if (Object.hasOwn(mapping, name)) {
    const mapped = mapping[name];
    if (mapped === null || mapped === undefined) return { kind: 'ignore' };
    const target = parseTarget(mapped)!;
    if (target.kind === 'custom' && !catalogKeys.has(target.key)) return { kind: 'not_in_catalog', key: target.key };
    return target;
  }
  const own = headerAsName(name);
  const target = parseTarget(own);
  if (target && target.kind !== 'custom') return target;
  if (target?.kind === 'custom' && catalogKeys.has(target.key)) return target;
  if (target?.kind === 'custom' && own.startsWith('custom_fields.')) return { kind: 'not_in_catalog', key: target.key };
  if (isReservedName(own)) return { kind: 'ignore' };
  return { kind: 'unknown' };
}

const quoted = (names: string[]) => names.map((n) => JSON.stringify(n)).join(', ');

/** Delimiters a file may use instead of the one it was read with, as ?delimiter= names them. */
const OTHER_DELIMITERS: [string, string][] = [
  [';', ';'],
  ['\t', 'tab'],
  ['|', '|'],
];

/**
 * When the header reads as if split at the wrong delimiter (a header of one column holding ";", a tab or "|", such
 * as a spreadsheet's export in a locale whose decimal comma makes ";" the separator): the hint to add to the error.
 */
function delimiterHint(headers: string[]): string {
  const line = headers.join('');
  const counts = OTHER_DELIMITERS.map(([char, name]) => [line.split(char).length - 1, name] as const).filter(([n]) => n > 0);
  if (counts.length === 0) return '';
  const [, name] = counts.reduce((best, c) => (c[0] > best[0] ? c : best));
  return `; the header looks delimited by ${name === 'tab' ? 'tabs' : `"${name}"`}: pass ?delimiter=${encodeURIComponent(name)}`;
}

/** Resolves a CSV header; a string is the per-file error (why the file cannot be imported). */
export function planColumns(headers: string[], mapping: Record<string, string | null>, catalogKeys: ReadonlySet<string>): ColumnPlan | string {
  const seenHeaders = new Set<string>();
  const duplicateHeaders: string[] = [];
  for (const h of headers) {
    if (seenHeaders.has(h)) duplicateHeaders.push(h);
    seenHeaders.add(h);
  }
  if (duplicateHeaders.length > 0) return `the header names a column twice: ${quoted([...new Set(duplicateHeaders)])}`;
  const missing = Object.keys(mapping).filter((h) => !seenHeaders.has(h));
  if (missing.length > 0) return `the mapping names column(s) the header does not have: ${quoted(missing)} (header: ${quoted(headers.slice(0, 50))})`;

  const targets: Target[] = [];
  const unknown: string[] = [];
  const notInCatalog: string[] = [];
  const byTarget = new Map<string, string>();
  for (const header of headers) {
    const resolved = resolveName(header, mapping, catalogKeys);
    if (resolved.kind === 'unknown') {
      unknown.push(header);
      targets.push({ kind: 'ignore' });
      continue;
    }
    if (resolved.kind === 'not_in_catalog') {
      notInCatalog.push(`${header} → custom_fields.${resolved.key}`);
      targets.push({ kind: 'ignore' });
      continue;
    }
    if (resolved.kind !== 'ignore') {
      const name = targetName(resolved);
      const other = byTarget.get(name);
      if (other !== undefined) return `columns ${quoted([other, header])} both map to ${name}`;
      byTarget.set(name, header);
    }
    targets.push(resolved);
  }
  if (!targets.some((t) => t.kind === 'email')) {
    return (
      'no column holds the email address: name one "email" or map it with ?mapping={"<header>":"email"} ' +
      `(header: ${quoted(headers.slice(0, 50))})${delimiterHint(headers)}`
    );
  }
  if (notInCatalog.length > 0)
    return `column(s) map to custom fields the catalog does not have: ${notInCatalog.join(', ')} (define them under /contact-custom-fields)`;
  if (unknown.length > 0) {
    return (
      `column(s) that are neither a contact column nor a custom field: ${quoted(unknown)}; ` +
      'map each with ?mapping= to a column, custom_fields.<key>, or null to ignore it'
    );
  }
  return {
    targets,
    profile: targets.flatMap((t) => (t.kind === 'profile' ? [t.column] : [])),
    customKeys: targets.flatMap((t) => (t.kind === 'custom' ? [t.key] : [])),
    status: targets.some((t) => t.kind === 'status'),
  };
}
