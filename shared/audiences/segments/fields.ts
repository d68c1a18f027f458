// The segment language's vocabulary: which contact fields a rule may name, how each compares (its kind), and the operators of each kind.
import { CONTACT_STATUSES, PROFILE_COLUMN_NAMES } from '../contacts/fields.js';
import type { FieldType } from '../custom-fields/values.js';

/**
 * How a field compares. Text is compared without case; status is one of the contact statuses;
 * numbers as numbers; dates by calendar day (UTC); datetimes as instants (or UTC days, given a date).
 */
export type ValueKind = 'text' | 'status' | 'number' | 'boolean' | 'date' | 'datetime';

const TEXT_OPERATORS = ['eq', 'neq', 'contains', 'not_contains', 'starts_with', 'ends_with', 'in', 'not_in', 'exists', 'not_exists'] as const;
const NUMBER_OPERATORS = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'in', 'not_in', 'exists', 'not_exists'] as const;
const DATE_OPERATORS = [
  'on',
  'not_on',
  'before',
  'after',
  'on_or_before',
  'on_or_after',
  'within_last_days',
  'not_within_last_days',
  'within_next_days',
  'exists',
  'not_exists',
] as const;

/** The operators each kind accepts. */
export const OPERATORS_BY_KIND = {
  text: TEXT_OPERATORS,
  status: ['eq', 'neq', 'in', 'not_in'],
  number: NUMBER_OPERATORS,
  boolean: ['eq', 'neq', 'exists', 'not_exists'],
  date: DATE_OPERATORS,
  datetime: DATE_OPERATORS,
} as const satisfies Record<ValueKind, readonly string[]>;

export type FieldOperator = (typeof OPERATORS_BY_KIND)[ValueKind][number];

/** Every field operator of any kind (a name outside this set is not an operator at all). */
export const FIELD_OPERATORS: ReadonlySet<string> = new Set(Object.values(OPERATORS_BY_KIND).flat());

/**
 * Operators that are the exact negation of another: a contact matches `neq v` exactly when it does not
 * match `eq v` — so a contact without a value (or with a stray value of another type) matches every negation.
 */
export const NEGATIONS = {
  neq: 'eq',
  not_contains: 'contains',
  not_in: 'in',
  not_exists: 'exists',
  not_on: 'on',
  not_within_last_days: 'within_last_days',
} as const satisfies Partial<Record<FieldOperator, FieldOperator>>;

/** Operators that take no value. */
export const VALUELESS: ReadonlySet<string> = new Set(['exists', 'not_exists']);

/**
 * The contact's own columns a rule may name, with their kind (a Map: a name such as __proto__ must not find anything). `id`, `tenant_id` and `custom_fields`
 * itself are not comparable.
 */
export const COLUMN_KINDS: ReadonlyMap<string, ValueKind> = new Map<string, ValueKind>([
  ['email', 'text'],
  ...PROFILE_COLUMN_NAMES.map((c) => [c, 'text'] as const),
  ['status', 'status'],
  ['best_send_hour', 'number'],
  ['created_at', 'datetime'],
  ['updated_at', 'datetime'],
]);

export const SEGMENT_COLUMNS = [...COLUMN_KINDS.keys()];
export const STATUS_VALUES: readonly string[] = CONTACT_STATUSES;

/** A custom field's kind follows its catalog type: text-like types (select, email, url, phone, longtext) compare as text. */
export function kindOfType(type: FieldType): ValueKind {
  switch (type) {
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime';
    default:
      return 'text';
  }
}

/** Prefix of a custom field's name in a rule: `custom_fields.<key>`. */
export const CUSTOM_PREFIX = 'custom_fields.';

export const LIMITS = {
  /** Group nesting: the definition itself is level 1. */
  maxDepth: 5,
  /** Rules in all (groups not counted). */
  maxRules: 100,
  /** Values of one `in` / `not_in`. */
  maxInValues: 1_000,
  /** Characters of one text value. */
  maxTextLength: 1_000,
  /** within_last_days, not_within_last_days, within_next_days. */
  maxFieldDays: 36_500,
  /** Engagement rules' `days`. */
  maxEngagementDays: 365,
} as const;
