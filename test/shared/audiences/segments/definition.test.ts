// Segment definitions: the accepted language, every refusal with the path it names, limits, hostile field names, and stale rules of saved definitions.
import t from 'tap';
import type { FieldType } from '../../../../shared/audiences/custom-fields/values.js';
import { parseDefinition, resolveDefinition, type DefinitionEnv, type GroupNode } from '../../../../shared/audiences/segments/definition.js';

const LIST = '5b0c5d3e-8f4a-4a57-9a7e-0c1d2e3f4a5b';
const FOREIGN_LIST = '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a';
const env: DefinitionEnv = {
  customFields: new Map<string, FieldType>([
    ['plan', 'select'],
    ['age', 'number'],
    ['vip', 'boolean'],
    ['birthday', 'date'],
    ['last_order_at', 'datetime'],
    ['bio', 'longtext'],
  ]),
  lists: new Set([LIST]),
};

const field = (f: string, operator: string, value?: unknown) => ({ type: 'field', field: f, operator, ...(value !== undefined ? { value } : {}) });
const and = (...rules: unknown[]) => ({ op: 'AND', rules });

function check(raw: unknown, strict = true): GroupNode {
  return resolveDefinition(parseDefinition(raw), env, { strict });
}

t.test('accepted: every kind of rule, nested groups, normalized values', async (t) => {
  const tree = check({
    op: 'OR',
    rules: [
      field('email', 'ends_with', '@acme.test'),
      field('custom_fields.plan', 'in', ['pro', 'enterprise']),
      { type: 'group', op: 'AND', rules: [field('custom_fields.age', 'gte', 30), field('custom_fields.vip', 'eq', true)] },
      {
        op: 'AND',
        rules: [field('custom_fields.birthday', 'within_next_days', 7), field('custom_fields.last_order_at', 'after', '2026-01-31T10:30:00+01:00')],
      },
      field('created_at', 'on', '2026-02-01'),
      field('best_send_hour', 'in', [8, 9]),
      field('status', 'neq', 'unsubscribed'),
      field('company', 'not_exists'),
      { type: 'list', operator: 'not_in', list_id: LIST.toUpperCase() },
      { type: 'engagement', event: 'clicked', operator: 'within', days: 365 },
    ],
  });
  t.equal(tree.op, 'OR');
  t.match(
    tree.rules[3],
    { kind: 'group', rules: [{}, { kind: 'field', valueKind: 'datetime', value: '2026-01-31T09:30:00.000Z' }] },
    'a datetime value is kept in UTC',
  );
  t.match(tree.rules[8], { kind: 'list', listId: LIST }, 'list ids compare without case');
  t.match(tree.rules[1], { kind: 'field', target: { customKey: 'plan' }, valueKind: 'text' }, 'a select field compares as text');
  const parsed = parseDefinition(and(field('status', 'eq', 'deleted')));
  t.ok(parsed.namesStatus, 'naming status is noticed');
  t.notOk(parseDefinition(and(field('email', 'exists'))).namesStatus);
  t.same(
    parseDefinition({ op: 'AND', rules: [{ type: 'group', op: 'OR', rules: [field('email', 'exists', null)] }] }).stored,
    { op: 'AND', rules: [{ op: 'OR', rules: [{ type: 'field', field: 'email', operator: 'exists', value: null }] }] },
    'the stored form',
  );
});

t.test('every refusal names the path of the bad rule', async (t) => {
  const deep = (levels: number): unknown => (levels === 1 ? and(field('email', 'exists')) : and(deep(levels - 1)));
  const cases: [unknown, string, RegExp][] = [
    [null, 'definition', /must be a group/],
    [[], 'definition', /must be a group/],
    ['AND', 'definition', /must be a group/],
    [{ op: 'XOR', rules: [] }, 'definition.op', /must be AND or OR/],
    [{ op: 'and', rules: [field('email', 'exists')] }, 'definition.op', /must be AND or OR/],
    [{ rules: [field('email', 'exists')] }, 'definition.op', /must be AND or OR/],
    [{ op: 'AND' }, 'definition.rules', /must be an array/],
    [{ op: 'AND', rules: [] }, 'definition.rules', /at least one rule/],
    [{ op: 'AND', rules: [field('email', 'exists')], name: 'x' }, 'definition.name', /is not a property of a group/],
    [{ op: 'AND', type: 'field', rules: [field('email', 'exists')] }, 'definition.type', /must be "group"/],
    [and(5), 'definition.rules[0]', /must be a rule/],
    [and({ field: 'email', operator: 'exists' }), 'definition.rules[0].type', /is required/],
    [and({ type: 'segment' }), 'definition.rules[0].type', /must be field, list, engagement or group/],
    [and(field('email', 'exists'), { ...field('email', 'eq', 'a'), extra: 1 }), 'definition.rules[1].extra', /is not a property of a field rule/],
    [and({ type: 'field', operator: 'eq', value: 'a' }), 'definition.rules[0].field', /is required/],
    [and({ type: 'field', field: 'email', value: 'a' }), 'definition.rules[0].operator', /is required/],
    [and(field('email', 'like', 'a')), 'definition.rules[0].operator', /"like" is not an operator/],
    [
      and(field('email', 'exists'), and(field('first_name', 'eq', 'a'), field('nickname', 'eq', 'b'))),
      'definition.rules[1].rules[1].field',
      /"nickname" is not a contact field/,
    ],
    [and(field('id', 'eq', 'x')), 'definition.rules[0].field', /"id" cannot be compared/],
    [and(field('tenant_id', 'eq', 'x')), 'definition.rules[0].field', /cannot be compared/],
    [and(field('custom_fields', 'exists')), 'definition.rules[0].field', /cannot be compared/],
    [and(field('email_hash', 'exists')), 'definition.rules[0].field', /is not a contact field/],
    [and(field('custom_fields.shoe_size', 'eq', 42)), 'definition.rules[0].field', /"shoe_size" is not a field of the custom-field catalog/],
    [and(field('custom_fields.', 'exists')), 'definition.rules[0].field', /"" is not a field of the custom-field catalog/],
    [and(field('custom_fields.age', 'contains', '4')), 'definition.rules[0].operator', /contains does not apply to custom_fields.age \(a number field\)/],
    [and(field('custom_fields.vip', 'gt', true)), 'definition.rules[0].operator', /gt does not apply/],
    [and(field('custom_fields.plan', 'before', '2026-01-01')), 'definition.rules[0].operator', /before does not apply/],
    [and(field('custom_fields.birthday', 'eq', '2026-01-01')), 'definition.rules[0].operator', /eq does not apply .*use one of on, not_on/],
    [and(field('status', 'exists')), 'definition.rules[0].operator', /exists does not apply to status/],
    [and(field('custom_fields.age', 'eq', '42')), 'definition.rules[0].value', /must be a number/],
    [and(field('custom_fields.age', 'gt', null)), 'definition.rules[0].value', /is required for gt/],
    [and(field('best_send_hour', 'lt', Number.MAX_VALUE * 2)), 'definition.rules[0].value', /./],
    [and(field('custom_fields.vip', 'eq', 'true')), 'definition.rules[0].value', /must be true or false/],
    [and(field('custom_fields.plan', 'eq', 5)), 'definition.rules[0].value', /must be a string/],
    [and(field('email', 'eq', '')), 'definition.rules[0].value', /must not be empty/],
    [and(field('email', 'contains', 'x'.repeat(1001))), 'definition.rules[0].value', /longer than 1000/],
    [and(field('email', 'exists', 'yes')), 'definition.rules[0].value', /exists takes no value/],
    [and(field('email', 'in', 'a')), 'definition.rules[0].value', /non-empty array/],
    [and(field('email', 'in', [])), 'definition.rules[0].value', /non-empty array/],
    [and(field('email', 'in', ['a', 7])), 'definition.rules[0].value[1]', /must be a string/],
    [
      and(
        field(
          'email',
          'not_in',
          Array.from({ length: 1001 }, (_, i) => `v${i}`),
        ),
      ),
      'definition.rules[0].value',
      /at most 1000 values/,
    ],
    [and(field('status', 'eq', 'Active')), 'definition.rules[0].value', /must be one of active, unsubscribed, deleted/],
    [and(field('status', 'in', ['active', 'gone'])), 'definition.rules[0].value[1]', /must be one of/],
    [and(field('custom_fields.birthday', 'on', '2023-02-29')), 'definition.rules[0].value', /must be a date YYYY-MM-DD/],
    [and(field('custom_fields.birthday', 'before', '2026-01-31T00:00:00Z')), 'definition.rules[0].value', /must be a date/],
    [and(field('custom_fields.last_order_at', 'on', '2026-01-31T00:00:00Z')), 'definition.rules[0].value', /must be a date/],
    [and(field('created_at', 'after', '2026-01-31T10:30:00')), 'definition.rules[0].value', /RFC 3339 date-time with a time zone/],
    [and(field('updated_at', 'within_last_days', 0)), 'definition.rules[0].value', /whole number of days from 1 to 36500/],
    [and(field('custom_fields.birthday', 'within_next_days', 1.5)), 'definition.rules[0].value', /whole number of days/],
    [and(field('custom_fields.birthday', 'within_next_days', '7')), 'definition.rules[0].value', /whole number of days/],
    [and({ type: 'list', operator: 'in' }), 'definition.rules[0].list_id', /must be the id of one of your lists/],
    [and({ type: 'list', operator: 'in', list_id: "1' or '1'='1" }), 'definition.rules[0].list_id', /must be the id/],
    [and({ type: 'list', operator: 'contains', list_id: LIST }), 'definition.rules[0].operator', /must be in or not_in/],
    [and({ type: 'list', operator: 'in', list_id: FOREIGN_LIST }), 'definition.rules[0].list_id', /is not one of your lists/],
    [and({ type: 'engagement', event: 'bounced', operator: 'within', days: 3 }), 'definition.rules[0].event', /must be opened or clicked/],
    [and({ type: 'engagement', event: 'opened', operator: 'before', days: 3 }), 'definition.rules[0].operator', /must be within or not_within/],
    [and({ type: 'engagement', event: 'opened', operator: 'within', days: 0 }), 'definition.rules[0].days', /from 1 to 365/],
    [and({ type: 'engagement', event: 'opened', operator: 'within', days: 366 }), 'definition.rules[0].days', /from 1 to 365/],
    [and({ type: 'engagement', event: 'opened', operator: 'within' }), 'definition.rules[0].days', /from 1 to 365/],
    [
      and({ type: 'engagement', event: 'opened', operator: 'within', days: 3, list_id: LIST }),
      'definition.rules[0].list_id',
      /is not a property of a engagement rule/,
    ],
    [deep(6), 'definition.rules[0].rules[0].rules[0].rules[0].rules[0]', /at most 5 levels/],
    [and(...Array.from({ length: 101 }, () => field('email', 'exists'))), 'definition.rules', /at most 100 rules/],
    [
      and(and(...Array.from({ length: 60 }, () => field('email', 'exists'))), and(...Array.from({ length: 41 }, () => field('email', 'exists')))),
      'definition.rules[1].rules[40]',
      /at most 100 rules/,
    ],
  ];
  for (const [raw, path, problem] of cases) {
    t.throws(
      () => check(raw),
      { slug: 'validation_error', message: new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')}: .*${problem.source}`) },
      `${path} ${problem}`,
    );
  }
  t.doesNotThrow(() => check(deep(5)), 'five levels are allowed');
  t.doesNotThrow(() => check(and(...Array.from({ length: 100 }, () => field('email', 'exists')))), 'a hundred rules are allowed');
});

t.test('hostile field names and keys are refused before any SQL', async (t) => {
  const names = [
    'email; drop table contacts',
    'email"--',
    'c.email',
    'EMAIL',
    "custom_fields.plan'--",
    'custom_fields.plan") or 1=1 --',
    'custom_fields.Plan',
    'custom_fields.plan.nested',
    `custom_fields.${'a'.repeat(51)}`,
    'custom_fields.__proto__',
    'custom_fields.constructor',
    '__proto__',
  ];
  for (const name of names) {
    t.throws(() => check(and(field(name, 'exists'))), { slug: 'validation_error', message: /^definition\.rules\[0\]\.field: / }, JSON.stringify(name));
  }
  const long = `x${'y'.repeat(500)}`;
  t.throws(() => check(and(field(long, 'exists'))), { message: /"xy{59}…"/ }, 'a long name is cut short in the message');
});

t.test('saved definitions: a rule that no longer checks matches nothing and is reported', async (t) => {
  const saved = parseDefinition({
    op: 'OR',
    rules: [
      field('custom_fields.gone', 'neq', 'x'),
      field('custom_fields.age', 'gt', 3),
      { type: 'list', operator: 'not_in', list_id: FOREIGN_LIST },
      field('email', 'exists'),
    ],
  });
  t.throws(() => resolveDefinition(saved, env, { strict: true }), { message: /^definition\.rules\[0\]\.field/ }, 'strict: 422');
  const retyped: DefinitionEnv = { ...env, customFields: new Map([...env.customFields, ['age', 'text' as FieldType]]) };
  const tree = resolveDefinition(saved, retyped, { strict: false });
  t.match(tree.rules, [
    { kind: 'stale', path: 'definition.rules[0]', problem: /custom_fields|gone/ },
    { kind: 'stale', path: 'definition.rules[1]', problem: /gt does not apply/ },
    { kind: 'stale', path: 'definition.rules[2]', problem: /is not one of your lists/ },
    { kind: 'field' },
  ]);
  t.throws(
    () => resolveDefinition(parseDefinition({ op: 'AND' }), env, { strict: false }),
    { message: /definition\.rules/ },
    'a malformed shape is refused even when not strict',
  );
});
