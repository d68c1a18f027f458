// Custom-field values against the catalog: each type's rule and stored form, CSV text coercion, required and unknown keys.
import t from 'tap';
import { checkCustomFields, checkValue, visibleCustomFields, type FieldDefinition, type FieldType } from '../../../../shared/audiences/custom-fields/values.js';

const field = (type: FieldType, extra: Partial<FieldDefinition> = {}): FieldDefinition => ({ key: 'f', type, options: null, required: false, ...extra });

t.test('each type accepts its form and stores it normalized', async (t) => {
  t.equal(checkValue(field('text'), 'Hello', 'f'), 'Hello');
  t.equal(checkValue(field('longtext'), 'a\nb', 'f'), 'a\nb');
  t.equal(checkValue(field('number'), 42.5, 'f'), 42.5);
  t.equal(checkValue(field('number'), ' -7 ', 'f', 'text'), -7, 'a CSV cell is read as a number');
  t.equal(checkValue(field('boolean'), false, 'f'), false);
  t.equal(checkValue(field('boolean'), 'Yes', 'f', 'text'), true);
  t.equal(checkValue(field('date'), '2024-02-29', 'f'), '2024-02-29');
  t.equal(checkValue(field('datetime'), '2026-01-31T10:30:00+01:00', 'f'), '2026-01-31T09:30:00.000Z', 'stored in UTC');
  t.equal(checkValue(field('select', { options: ['gold', 'silver'] }), 'gold', 'f'), 'gold');
  t.equal(checkValue(field('email'), ' Jane@Example.COM ', 'f'), 'jane@example.com');
  t.equal(checkValue(field('url'), 'https://example.com/a?b=1', 'f'), 'https://example.com/a?b=1');
  t.equal(checkValue(field('phone'), '+1 (555) 010-9999', 'f'), '+1 (555) 010-9999');
});

t.test('each type refuses what is not its form, naming the path', async (t) => {
  const bad: [FieldDefinition, unknown, ('json' | 'text')?][] = [
    [field('text'), 5],
    [field('text'), 'two\nlines'],
    [field('text'), 'x'.repeat(1001)],
    [field('number'), '42'],
    [field('number'), 'forty', 'text'],
    [field('number'), Infinity],
    [field('boolean'), 'true'],
    [field('boolean'), 'maybe', 'text'],
    [field('date'), '2023-02-29'],
    [field('date'), '2023-2-1'],
    [field('datetime'), '2026-01-31T10:30:00'],
    [field('datetime'), '2026-13-31T10:30:00Z'],
    [field('select', { options: ['gold'] }), 'Gold'],
    [field('email'), 'not-an-address'],
    [field('url'), 'javascript:alert(1)'],
    [field('url'), '/relative'],
    [field('phone'), 'call me'],
  ];
  for (const [f, value, source] of bad) {
    t.throws(
      () => checkValue(f, value, 'custom_fields.f', source),
      { slug: 'validation_error', message: /^custom_fields\.f/ },
      `${f.type} refuses ${JSON.stringify(value)}`,
    );
  }
});

t.test('a custom_fields object: unknown keys, required fields, removal', async (t) => {
  const catalog: FieldDefinition[] = [field('number', { key: 'age' }), field('text', { key: 'plan', required: true })];
  t.same(checkCustomFields(catalog, { age: 30, plan: 'pro' }, { creating: true }), { set: { age: 30, plan: 'pro' }, remove: [] });
  t.throws(() => checkCustomFields(catalog, { age: 30 }, { creating: true }), { message: /^custom_fields\.plan: is required/ });
  t.same(checkCustomFields(catalog, { age: null }, { creating: false }), { set: {}, remove: ['age'] }, 'null removes a value');
  t.throws(
    () => checkCustomFields(catalog, { plan: null }, { creating: false }),
    { message: /^custom_fields\.plan: is required/ },
    'a required value cannot be removed',
  );
  t.throws(() => checkCustomFields(catalog, { shoe: 1 }, { creating: false }), { message: /^custom_fields\.shoe: is not a field/ });
  t.same(
    checkCustomFields(catalog, { age: '', plan: 'x' }, { creating: false, source: 'text' }),
    { set: { plan: 'x' }, remove: ['age'] },
    'an empty CSV cell removes',
  );
});

t.test('values of fields no longer in the catalog are not shown', async (t) => {
  t.same(visibleCustomFields([{ key: 'age' }], { age: 3, gone: 'x' }), { age: 3 });
});
