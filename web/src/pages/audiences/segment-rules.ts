// The segment builder's rules and the API's definition language: a flat group of rules (a field compared, list
// membership, recent engagement) to the definition POST /segments takes, and back where the definition is flat.
import { OPERATORS, type FieldKind } from './profile';

export type Rule =
  | { kind: 'field'; field: string; op: string; value: string }
  | { kind: 'list'; op: 'in' | 'not_in'; list_id: string }
  | { kind: 'engagement'; event: 'opened' | 'clicked'; op: 'within' | 'not_within'; days: string };

export interface Group {
  op: 'AND' | 'OR';
  rules: Rule[];
}

/** The API's value for a field rule: a number, a boolean, a list, a count of days; undefined while it is incomplete. */
function ruleValue(kind: FieldKind, op: string, text: string): unknown {
  const operator = OPERATORS[kind].find((o) => o.op === op);
  if (operator?.noValue) return null;
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  if (operator?.list) return trimmed.split(',').map((v) => v.trim());
  if (operator?.days || kind === 'number') return Number.isFinite(Number(trimmed)) ? Number(trimmed) : undefined;
  if (kind === 'boolean') return trimmed === 'true';
  return trimmed;
}

/** The definition of a group, or undefined while a rule is incomplete (nothing to count yet). */
export function definitionOf(group: Group, kindOf: (field: string) => FieldKind): Record<string, unknown> | undefined {
  const rules: Record<string, unknown>[] = [];
  for (const rule of group.rules) {
    if (rule.kind === 'list') {
      if (!rule.list_id) return undefined;
      rules.push({ type: 'list', operator: rule.op, list_id: rule.list_id });
    } else if (rule.kind === 'engagement') {
      const days = Number(rule.days);
      if (!rule.days.trim() || !Number.isInteger(days)) return undefined;
      rules.push({ type: 'engagement', event: rule.event, operator: rule.op, days });
    } else {
      const value = ruleValue(kindOf(rule.field), rule.op, rule.value);
      if (value === undefined) return undefined;
      rules.push({ type: 'field', field: rule.field, operator: rule.op, ...(value === null ? {} : { value }) });
    }
  }
  return rules.length === 0 ? undefined : { op: group.op, rules };
}

/** A saved definition as the builder's group; undefined when it nests groups (the builder edits one level). */
export function groupOf(definition: Record<string, unknown>): Group | undefined {
  const op = definition['op'] === 'OR' ? 'OR' : 'AND';
  const rules: Rule[] = [];
  for (const r of (definition['rules'] as Record<string, unknown>[] | undefined) ?? []) {
    if (r['type'] === 'list') rules.push({ kind: 'list', op: r['operator'] === 'not_in' ? 'not_in' : 'in', list_id: String(r['list_id'] ?? '') });
    else if (r['type'] === 'engagement')
      rules.push({
        kind: 'engagement',
        event: r['event'] === 'clicked' ? 'clicked' : 'opened',
        op: r['operator'] === 'not_within' ? 'not_within' : 'within',
        days: String(r['days'] ?? ''),
      });
    else if (r['type'] === 'field') {
      const v = r['value'];
      rules.push({
        kind: 'field',
        field: String(r['field']),
        op: String(r['operator']),
        value: v === undefined || v === null ? '' : Array.isArray(v) ? v.join(', ') : String(v),
      });
    } else return undefined;
  }
  return { op, rules };
}
