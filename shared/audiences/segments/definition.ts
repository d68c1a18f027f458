// Segment definitions: the shape check (groups, rules, limits) and the check against the tenant's catalog and lists, each refusal naming its path.
import { AppError, validationError } from '../../kernel/errors.js';
import { checkValue, type FieldType } from '../custom-fields/values.js';
import { isUuid } from '../../kernel/ids.js';
import {
  COLUMN_KINDS,
  CUSTOM_PREFIX,
  FIELD_OPERATORS,
  kindOfType,
  LIMITS,
  OPERATORS_BY_KIND,
  SEGMENT_COLUMNS,
  STATUS_VALUES,
  VALUELESS,
  type FieldOperator,
  type ValueKind,
} from './fields.js';

export type GroupOp = 'AND' | 'OR';
export type ListOperator = 'in' | 'not_in';
export type EngagementEvent = 'opened' | 'clicked';
export type EngagementOperator = 'within' | 'not_within';

/** A field rule's value once checked: dates as YYYY-MM-DD, instants as ISO UTC strings, `days` as integers. */
export type RuleValue = string | number | boolean | string[] | number[] | null;

export interface GroupNode {
  kind: 'group';
  op: GroupOp;
  rules: SegmentNode[];
}

export interface FieldNode {
  kind: 'field';
  path: string;
  /** The column, or the custom field's key. */
  target: { column: string } | { customKey: string };
  valueKind: ValueKind;
  operator: FieldOperator;
  value: RuleValue;
}

export interface ListNode {
  kind: 'list';
  path: string;
  operator: ListOperator;
  listId: string;
}

export interface EngagementNode {
  kind: 'engagement';
  path: string;
  event: EngagementEvent;
  operator: EngagementOperator;
  days: number;
}

/** A saved rule that no longer checks (its custom field or list was deleted, or the field's type changed): it matches no contact. */
export interface StaleNode {
  kind: 'stale';
  path: string;
  problem: string;
}

export type SegmentNode = GroupNode | FieldNode | ListNode | EngagementNode | StaleNode;

/** The stored JSON form of a definition (what the API returns). */
export interface StoredGroup {
  op: GroupOp;
  rules: (StoredGroup | StoredRule)[];
}
export type StoredRule =
  | { type: 'field'; field: string; operator: string; value?: unknown }
  | { type: 'list'; operator: ListOperator; list_id: string }
  | { type: 'engagement'; event: EngagementEvent; operator: EngagementOperator; days: number };

/** A definition whose shape is right: field rules still to be checked against the catalog, lists against the tenant's. */
export interface ParsedDefinition {
  stored: StoredGroup;
  /** Every list_id named, for one look-up. */
  listIds: string[];
  /** Whether a rule names `status` (then the definition decides about deleted contacts). */
  namesStatus: boolean;
}

/** What a definition is checked against: the tenant's custom-field catalog (key → type) and which of the named lists are the tenant's. */
export interface DefinitionEnv {
  customFields: ReadonlyMap<string, FieldType>;
  lists: ReadonlySet<string>;
}

const GROUP_KEYS = new Set(['type', 'op', 'rules']);
const RULE_KEYS = {
  field: new Set(['type', 'field', 'operator', 'value']),
  list: new Set(['type', 'operator', 'list_id']),
  engagement: new Set(['type', 'event', 'operator', 'days']),
} as const;
const CUSTOM_KEY = /^[a-z][a-z0-9_]{0,49}$/;

/** A name from the request, quoted and cut short for a message. */
function quote(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function rejectUnknownKeys(node: Record<string, unknown>, allowed: ReadonlySet<string>, path: string, what: string): void {
  for (const key of Object.keys(node)) {
    if (!allowed.has(key)) throw validationError(`${path}.${key}`, `is not a property of ${what} (${[...allowed].join(', ')})`);
  }
}

/**
 * Checks the shape of a definition: `{ op: AND | OR, rules: [...] }` with rules of type field, list or engagement
 * and nested groups, at most LIMITS.maxDepth levels and LIMITS.maxRules rules. Throws 422 naming the path.
 */
export function parseDefinition(raw: unknown, path = 'definition'): ParsedDefinition {
  const state = { rules: 0, listIds: new Set<string>(), namesStatus: false };
  const stored = parseGroup(raw, path, 1, state);
  return { stored, listIds: [...state.listIds], namesStatus: state.namesStatus };
}

interface ParseState {
  rules: number;
  listIds: Set<string>;
  namesStatus: boolean;
}

function parseGroup(raw: unknown, path: string, depth: number, state: ParseState): StoredGroup {
  if (!isObject(raw)) throw validationError(path, 'must be a group: an object with op (AND or OR) and rules');
  if (depth > LIMITS.maxDepth) throw validationError(path, `groups nest at most ${LIMITS.maxDepth} levels deep (the definition is the first)`);
  rejectUnknownKeys(raw, GROUP_KEYS, path, 'a group');
  if (raw['type'] !== undefined && raw['type'] !== 'group') throw validationError(`${path}.type`, 'must be "group" or absent on a group');
  const op = raw['op'];
  if (op !== 'AND' && op !== 'OR') throw validationError(`${path}.op`, 'must be AND or OR');
  const rules = raw['rules'];
  if (!Array.isArray(rules)) throw validationError(`${path}.rules`, 'must be an array of rules and groups');
  if (rules.length === 0) throw validationError(`${path}.rules`, 'must hold at least one rule');
  if (rules.length > LIMITS.maxRules) throw validationError(`${path}.rules`, `a definition holds at most ${LIMITS.maxRules} rules`);
  const out: StoredGroup['rules'] = [];
  rules.forEach((item, i) => {
    const itemPath = `${path}.rules[${i}]`;
    if (isObject(item) && (item['type'] === 'group' || (item['type'] === undefined && 'rules' in item))) {
      out.push(parseGroup(item, itemPath, depth + 1, state));
    } else {
      if (++state.rules > LIMITS.maxRules) throw validationError(itemPath, `a definition holds at most ${LIMITS.maxRules} rules`);
      out.push(parseRule(item, itemPath, state));
    }
  });
  return { op, rules: out };
}

function parseRule(raw: unknown, path: string, state: ParseState): StoredRule {
  if (!isObject(raw)) throw validationError(path, 'must be a rule (an object with a type) or a group');
  const type = raw['type'];
  if (type === undefined) throw validationError(`${path}.type`, 'is required: field, list, engagement (or group)');
  if (type !== 'field' && type !== 'list' && type !== 'engagement') {
    throw validationError(`${path}.type`, 'must be field, list, engagement or group');
  }
  rejectUnknownKeys(raw, RULE_KEYS[type], path, `a ${type} rule`);
  const operator = raw['operator'];
  if (type === 'list') {
    if (operator !== 'in' && operator !== 'not_in') throw validationError(`${path}.operator`, 'must be in or not_in for a list rule');
    const listId = raw['list_id'];
    if (typeof listId !== 'string' || !isUuid(listId)) throw validationError(`${path}.list_id`, 'must be the id of one of your lists');
    const id = listId.toLowerCase();
    state.listIds.add(id);
    return { type, operator, list_id: id };
  }
  if (type === 'engagement') {
    const event = raw['event'];
    if (event !== 'opened' && event !== 'clicked') throw validationError(`${path}.event`, 'must be opened or clicked');
    if (operator !== 'within' && operator !== 'not_within') throw validationError(`${path}.operator`, 'must be within or not_within for an engagement rule');
    const days = raw['days'];
    if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > LIMITS.maxEngagementDays) {
      throw validationError(`${path}.days`, `must be a whole number of days from 1 to ${LIMITS.maxEngagementDays}`);
    }
    return { type, event, operator, days };
  }
  const field = raw['field'];
  if (typeof field !== 'string' || field === '') throw validationError(`${path}.field`, 'is required: a contact column or custom_fields.<key>');
  if (typeof operator !== 'string') throw validationError(`${path}.operator`, 'is required');
  if (!FIELD_OPERATORS.has(operator)) throw validationError(`${path}.operator`, `${quote(operator)} is not an operator (${[...FIELD_OPERATORS].join(', ')})`);
  if (field === 'status') state.namesStatus = true;
  const rule: StoredRule = { type, field, operator };
  if (raw['value'] !== undefined) rule.value = raw['value'];
  return rule;
}

/**
 * Checks a parsed definition against the tenant's catalog and lists and returns the tree compile.ts reads.
 * `strict` (saving, previewing): the first problem is a 422 naming its path. Otherwise (evaluating a saved
 * segment) a rule that no longer checks — its field or list deleted, its field's type changed — becomes a
 * stale rule that matches nothing, so a segment never grows because part of it vanished.
 */
export function resolveDefinition(parsed: ParsedDefinition, env: DefinitionEnv, options: { strict: boolean; path?: string }): GroupNode {
  const resolveGroup = (group: StoredGroup, path: string): GroupNode => ({
    kind: 'group',
    op: group.op,
    rules: group.rules.map((rule, i): SegmentNode => {
      const rulePath = `${path}.rules[${i}]`;
      if ('op' in rule) return resolveGroup(rule, rulePath);
      try {
        return resolveRule(rule, rulePath, env);
      } catch (err) {
        if (options.strict || !(err instanceof AppError)) throw err;
        return { kind: 'stale', path: rulePath, problem: err.message };
      }
    }),
  });
  return resolveGroup(parsed.stored, options.path ?? 'definition');
}

function resolveRule(rule: StoredRule, path: string, env: DefinitionEnv): SegmentNode {
  if (rule.type === 'list') {
    if (!env.lists.has(rule.list_id)) throw validationError(`${path}.list_id`, 'is not one of your lists');
    return { kind: 'list', path, operator: rule.operator, listId: rule.list_id };
  }
  if (rule.type === 'engagement') return { kind: 'engagement', path, event: rule.event, operator: rule.operator, days: rule.days };
  const { target, kind, type } = resolveField(rule.field, `${path}.field`, env);
  const allowed: readonly string[] = OPERATORS_BY_KIND[kind];
  if (!allowed.includes(rule.operator)) {
    throw validationError(`${path}.operator`, `${rule.operator} does not apply to ${rule.field} (a ${type} field): use one of ${allowed.join(', ')}`);
  }
  const operator = rule.operator as FieldOperator;
  return { kind: 'field', path, target, valueKind: kind, operator, value: checkRuleValue(kind, operator, rule.value, `${path}.value`) };
}

function resolveField(field: string, path: string, env: DefinitionEnv): { target: FieldNode['target']; kind: ValueKind; type: string } {
  if (field.startsWith(CUSTOM_PREFIX)) {
    const key = field.slice(CUSTOM_PREFIX.length);
    const type = CUSTOM_KEY.test(key) ? env.customFields.get(key) : undefined;
    if (!type) throw validationError(path, `${quote(key)} is not a field of the custom-field catalog`);
    return { target: { customKey: key }, kind: kindOfType(type), type };
  }
  const kind = COLUMN_KINDS.get(field);
  if (!kind) {
    const why = ['id', 'tenant_id', 'custom_fields'].includes(field) ? 'cannot be compared in a segment' : 'is not a contact field';
    throw validationError(path, `${quote(field)} ${why}: use one of ${SEGMENT_COLUMNS.join(', ')} or custom_fields.<key>`);
  }
  return { target: { column: field }, kind, type: kind };
}

const AS_TYPE: Record<'number' | 'boolean' | 'date', FieldType> = { number: 'number', boolean: 'boolean', date: 'date' };

function checkScalar(kind: ValueKind, operator: FieldOperator, value: unknown, path: string): string | number | boolean {
  switch (kind) {
    case 'text': {
      if (typeof value !== 'string') throw validationError(path, 'must be a string');
      if (value === '') throw validationError(path, 'must not be empty (use exists or not_exists)');
      if (value.length > LIMITS.maxTextLength) throw validationError(path, `is longer than ${LIMITS.maxTextLength} characters`);
      return value;
    }
    case 'status':
      if (typeof value !== 'string' || !STATUS_VALUES.includes(value)) throw validationError(path, `must be one of ${STATUS_VALUES.join(', ')}`);
      return value;
    case 'number':
    case 'boolean':
      return checkValue({ key: '', type: AS_TYPE[kind], options: null, required: false }, value, path);
    case 'date':
    case 'datetime': {
      if (operator.endsWith('_days')) {
        if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > LIMITS.maxFieldDays) {
          throw validationError(path, `must be a whole number of days from 1 to ${LIMITS.maxFieldDays}`);
        }
        return value;
      }
      const dateOnly = kind === 'date' || operator === 'on' || operator === 'not_on';
      if (dateOnly || (typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value.trim()))) {
        return checkValue({ key: '', type: 'date', options: null, required: false }, value, path);
      }
      return checkValue({ key: '', type: 'datetime', options: null, required: false }, value, path);
    }
  }
}

/** A rule's value for its kind and operator: none for exists / not_exists, an array for in / not_in, else one value. */
function checkRuleValue(kind: ValueKind, operator: FieldOperator, value: unknown, path: string): RuleValue {
  if (VALUELESS.has(operator)) {
    if (value !== undefined && value !== null) throw validationError(path, `${operator} takes no value`);
    return null;
  }
  if (value === undefined || value === null) throw validationError(path, `is required for ${operator}`);
  if (operator === 'in' || operator === 'not_in') {
    if (!Array.isArray(value) || value.length === 0) throw validationError(path, `must be a non-empty array for ${operator}`);
    if (value.length > LIMITS.maxInValues) throw validationError(path, `holds at most ${LIMITS.maxInValues} values`);
    return value.map((v, i) => checkScalar(kind, operator, v, `${path}[${i}]`)) as string[] | number[];
  }
  return checkScalar(kind, operator, value, path);
}
