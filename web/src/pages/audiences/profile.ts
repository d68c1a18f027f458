// The contact fields the pages show and segments compare, named as the API's contact object names them (the type
// checks each name against it), with how a segment rule compares each.
import type { paths } from '../../../../clients/typescript/index';

export type ApiContact = paths['/contacts/{id}']['get']['responses'][200]['content']['application/json']['data'];

export type FieldKind = 'text' | 'number' | 'boolean' | 'date' | 'status';

export const PROFILE: { key: keyof ApiContact & string; label: string }[] = [
  { key: 'first_name', label: 'First name' },
  { key: 'last_name', label: 'Last name' },
  { key: 'company', label: 'Company' },
  { key: 'title', label: 'Title' },
  { key: 'phone', label: 'Phone' },
  { key: 'mobile_phone', label: 'Mobile phone' },
  { key: 'city', label: 'City' },
  { key: 'state', label: 'State' },
  { key: 'country', label: 'Country' },
  { key: 'postal_code', label: 'Postal code' },
  { key: 'timezone', label: 'Time zone' },
];

/** Every field a segment rule can compare, the custom-field catalog's appended by the builder. */
export const SEGMENT_FIELDS: { key: (keyof ApiContact & string) | `custom_fields.${string}`; label: string; kind: FieldKind }[] = [
  { key: 'email', label: 'Email', kind: 'text' },
  ...PROFILE.map((p) => ({ ...p, kind: 'text' as const })),
  { key: 'status', label: 'Status', kind: 'status' },
  { key: 'best_send_hour', label: 'Best hour to send (UTC)', kind: 'number' },
  { key: 'created_at', label: 'Added', kind: 'date' },
  { key: 'updated_at', label: 'Changed', kind: 'date' },
];

/** How a custom field of the catalog's type is compared. */
export function kindOfCatalogType(type: string): FieldKind {
  if (type === 'number') return 'number';
  if (type === 'boolean') return 'boolean';
  if (type === 'date' || type === 'datetime') return 'date';
  return 'text';
}

/** The operators of each kind, in the words the builder shows; those without a value are marked. */
export const OPERATORS: Record<FieldKind, { op: string; label: string; noValue?: true; list?: true; days?: true }[]> = {
  text: [
    { op: 'eq', label: 'is' },
    { op: 'neq', label: 'is not' },
    { op: 'contains', label: 'contains' },
    { op: 'not_contains', label: 'does not contain' },
    { op: 'starts_with', label: 'starts with' },
    { op: 'ends_with', label: 'ends with' },
    { op: 'in', label: 'is one of', list: true },
    { op: 'not_in', label: 'is none of', list: true },
    { op: 'exists', label: 'is set', noValue: true },
    { op: 'not_exists', label: 'is not set', noValue: true },
  ],
  number: [
    { op: 'eq', label: '=' },
    { op: 'neq', label: '≠' },
    { op: 'gt', label: '>' },
    { op: 'gte', label: '≥' },
    { op: 'lt', label: '<' },
    { op: 'lte', label: '≤' },
    { op: 'exists', label: 'is set', noValue: true },
    { op: 'not_exists', label: 'is not set', noValue: true },
  ],
  boolean: [
    { op: 'eq', label: 'is' },
    { op: 'neq', label: 'is not' },
    { op: 'exists', label: 'is set', noValue: true },
    { op: 'not_exists', label: 'is not set', noValue: true },
  ],
  date: [
    { op: 'on', label: 'on' },
    { op: 'before', label: 'before' },
    { op: 'after', label: 'after' },
    { op: 'within_last_days', label: 'within the last (days)', days: true },
    { op: 'not_within_last_days', label: 'not within the last (days)', days: true },
    { op: 'within_next_days', label: 'within the next (days)', days: true },
    { op: 'exists', label: 'is set', noValue: true },
    { op: 'not_exists', label: 'is not set', noValue: true },
  ],
  status: [
    { op: 'eq', label: 'is' },
    { op: 'neq', label: 'is not' },
  ],
};
