// Segments evaluated when used: deleted and erased contacts, a field or list deleted after saving, a key reused with another type, another tenant's lists.
import t from 'tap';
import { ManualClock } from '../../../../shared/kernel/clock.js';
import { loadConfig } from '../../../../shared/config/index.js';
import { connect } from '../../../../shared/db/connection.js';
import { TenantQueries } from '../../../../shared/db/deadline.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { createSegment, previewCount, segmentCount, selectDefinition, selectSegment } from '../../../../shared/audiences/segments/service.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { buildFixture, NOW } from './fixture.js';
import { evaluate } from './model.js';

const db = await createTestDatabase();
const sql = connect(db.url, createLogger('silent'), { max: 2 });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});
const fixture = await buildFixture(sql, 7, 400);
const deps = { sql, clock: new ManualClock(NOW), queries: new TenantQueries(sql, loadConfig({}).queries) };
const actor = { type: 'system' as const, id: null };
const field = (f: string, operator: string, value?: unknown) => ({ type: 'field', field: f, operator, ...(value !== undefined ? { value } : {}) });
const mine = fixture.contacts.filter((c) => c.tenant_id === fixture.tenantId);

t.test('deleted contacts are left out unless a rule names status; erased contacts always', async (t) => {
  const all = { op: 'AND', rules: [field('email', 'exists')] };
  t.equal(await previewCount(deps, fixture.tenantId, all), mine.filter((c) => c.email && c.status !== 'deleted').length, 'no deleted contact by default');
  const anyStatus = { op: 'AND', rules: [field('status', 'in', ['active', 'unsubscribed', 'deleted'])] };
  t.equal(await previewCount(deps, fixture.tenantId, anyStatus), mine.filter((c) => c.email).length, 'every status when the definition asks');
  const deletedOnly = { op: 'OR', rules: [field('status', 'eq', 'deleted')] };
  t.equal(await previewCount(deps, fixture.tenantId, deletedOnly), mine.filter((c) => c.email && c.status === 'deleted').length, 'only deleted ones');
  t.ok(
    mine.some((c) => c.email === null),
    'the fixture has erased contacts',
  );
  t.equal(await previewCount(deps, fixture.tenantId, { op: 'AND', rules: [field('email', 'not_exists')] }), 0, 'an erased contact is never selected');
});

t.test('a saved segment whose custom field is deleted, then re-created with another type', async (t) => {
  const definition = { op: 'OR', rules: [field('custom_fields.age', 'neq', 30), field('country', 'eq', 'gb')] };
  const segment = await createSegment(deps, fixture.tenantId, actor, { name: 'Not thirty', definition });
  t.equal((await segmentCount(deps, fixture.tenantId, segment.id)).count, evaluate(fixture, definition).size, 'evaluated as saved');

  await sql`delete from contact_custom_fields where tenant_id = ${fixture.tenantId} and key = 'age'`;
  const countryOnly = { op: 'AND', rules: [field('country', 'eq', 'gb')] };
  const gone = await segmentCount(deps, fixture.tenantId, segment.id);
  t.equal(gone.count, evaluate(fixture, countryOnly).size, 'the rule on the deleted field matches nothing, even a negation');
  t.match(gone.staleRules, [{ path: 'definition.rules[0]', problem: /"age" is not a field of the custom-field catalog/ }]);
  await t.rejects(
    previewCount(deps, fixture.tenantId, definition),
    { message: /^definition\.rules\[0\]\.field: "age" is not a field/ },
    'a new definition may not name it',
  );

  await sql`
    insert into contact_custom_fields (tenant_id, key, label, type, created_at, updated_at)
    values (${fixture.tenantId}, 'age', 'Age (text)', 'text', ${NOW}, ${NOW})`;
  const retyped = await segmentCount(deps, fixture.tenantId, segment.id);
  t.match(retyped.staleRules, [{ path: 'definition.rules[0]', problem: /must be a string/ }], 'the saved number no longer fits the text field');
  t.equal(retyped.count, evaluate(fixture, countryOnly).size);
  const asText = { op: 'AND', rules: [field('custom_fields.age', 'eq', '42')] };
  const strings = mine.filter((c) => c.email && c.status !== 'deleted' && c.custom_fields['age'] === '42').length;
  t.ok(strings > 0, 'some contacts hold the stray text "42"');
  t.equal(await previewCount(deps, fixture.tenantId, asText), strings, 'stored numbers do not match as text; stored text does');
  t.equal(
    await previewCount(deps, fixture.tenantId, { op: 'AND', rules: [field('custom_fields.age', 'contains', '3')] }),
    mine.filter((c) => c.email && c.status !== 'deleted' && typeof c.custom_fields['age'] === 'string' && (c.custom_fields['age'] as string).includes('3'))
      .length,
  );
});

t.test('a saved segment whose list is deleted', async (t) => {
  const [newsletter] = fixture.lists as [string];
  const definition = { op: 'AND', rules: [{ type: 'list', operator: 'not_in', list_id: newsletter }] };
  const segment = await createSegment(deps, fixture.tenantId, actor, { name: 'Not on the newsletter', definition });
  t.ok((await segmentCount(deps, fixture.tenantId, segment.id)).count > 0);
  await sql`delete from lists where id = ${newsletter}`;
  const after = await segmentCount(deps, fixture.tenantId, segment.id);
  t.equal(after.count, 0, 'not_in a deleted list matches nothing: a segment never grows because a part of it vanished');
  t.match(after.staleRules, [{ path: 'definition.rules[0]', problem: /list_id: is not one of your lists/ }]);
  const selection = await selectSegment(sql, fixture.tenantId, segment.id, NOW);
  t.same((await selection.page({ limit: 10 })).contacts, []);
});

t.test("another tenant's list, segment or events never count", async (t) => {
  await t.rejects(
    createSegment(deps, fixture.tenantId, actor, {
      name: 'x',
      definition: { op: 'AND', rules: [{ type: 'list', operator: 'in', list_id: fixture.otherList }] },
    }),
    { slug: 'validation_error', message: /^definition\.rules\[0\]\.list_id: is not one of your lists/ },
  );
  const theirs = await createSegment(deps, fixture.otherTenantId, actor, { name: 'theirs', definition: { op: 'AND', rules: [field('email', 'exists')] } });
  await t.rejects(selectSegment(sql, fixture.tenantId, theirs.id, NOW), { name: 'AppError', message: 'segment not found' });
  await t.rejects(segmentCount(deps, fixture.tenantId, 'not-a-uuid'), { name: 'AppError', message: 'segment not found' });
  const opened = { op: 'AND', rules: [{ type: 'engagement', event: 'opened', operator: 'within', days: 365 }] };
  t.equal(await previewCount(deps, fixture.tenantId, opened), evaluate(fixture, opened).size, "only the tenant's own events");
});

t.test("a selection works inside a caller's transaction", async (t) => {
  const definition = { op: 'AND', rules: [field('country', 'in', ['us', 'de'])] };
  const count = await sql.begin(async (tx) => (await selectDefinition(tx, fixture.tenantId, definition, { now: NOW, strict: true })).count());
  t.equal(count, evaluate(fixture, definition).size);
});
