// Segment SQL against an independent model over a few thousand generated contacts: every field and operator, list and engagement rules, hostile values, paging.
import t from 'tap';
import { connect } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { selectDefinition } from '../../../../shared/audiences/segments/service.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { buildFixture, NOW, prng } from './fixture.js';
import { allFields, evaluate, fieldRule, kindOf, OPERATORS } from './model.js';

const SEED = Number(process.env['SEGMENT_SEED'] ?? 20260315);
const db = await createTestDatabase();
const sql = connect(db.url, createLogger('silent'), { max: 2 });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});
const fixture = await buildFixture(sql, SEED, 3000);
const inScope = fixture.contacts.filter((c) => c.tenant_id === fixture.tenantId && c.email !== null && c.status !== 'deleted').length;

async function viaSql(definition: unknown): Promise<{ ids: string[]; count: number }> {
  const selection = await selectDefinition(sql, fixture.tenantId, definition, { now: NOW, strict: true });
  const page = await selection.page({ limit: 10_000 });
  if (page.next_cursor !== null) throw new Error('one page should hold the whole fixture');
  return { ids: page.contacts.map((c) => c.id).sort(), count: await selection.count() };
}

type Assert = Pick<typeof t, 'same' | 'equal' | 'comment'>;

async function agree(t: Assert, definition: Record<string, unknown>): Promise<number> {
  const expected = [...evaluate(fixture, definition)].sort();
  const got = await viaSql(definition);
  const label = `seed ${SEED}: ${JSON.stringify(definition)}`;
  if (!t.same(got.ids, expected, label)) t.comment(`sql ${got.ids.length} vs model ${expected.length}`);
  t.equal(got.count, expected.length, `count of ${label}`);
  return expected.length;
}

t.test('every field with every operator of its kind agrees with the model', async (t) => {
  const rand = prng(SEED);
  // Per kind and operator: did some rule select some but not all contacts (so the operator was really exercised)?
  const exercised = new Map<string, boolean>();
  for (const field of allFields(fixture)) {
    const kind = kindOf(fixture, field)!;
    for (const op of OPERATORS[kind]) {
      const key = `${kind} ${op}`;
      // Two values each, and a few more while this operator has not yet selected some but not all contacts.
      for (let i = 0; i < 2 || (i < 8 && !exercised.get(key)); i++) {
        const n = await agree(t, { op: 'AND', rules: [fieldRule(rand, fixture, field, op)] });
        exercised.set(key, (exercised.get(key) ?? false) || (n > 0 && n < inScope));
      }
    }
  }
  for (const [key, seen] of exercised) t.ok(seen, `${key} selected some contacts but not all at least once`);
});

t.test('list and engagement rules, at the top level and under OR and NOT-like negations', async (t) => {
  const [newsletter, customers, empty] = fixture.lists as [string, string, string];
  const list = (operator: string, id: string) => ({ type: 'list', operator, list_id: id });
  const engaged = (event: string, operator: string, days: number) => ({ type: 'engagement', event, operator, days });
  const country = { type: 'field', field: 'country', operator: 'in', value: ['us', 'GB'] };
  const cases = [
    { op: 'AND', rules: [list('in', newsletter)] },
    { op: 'AND', rules: [list('not_in', newsletter), list('in', customers)] },
    { op: 'AND', rules: [list('in', empty)] },
    { op: 'AND', rules: [list('not_in', empty)] },
    { op: 'OR', rules: [list('in', newsletter), list('in', customers)] },
    { op: 'OR', rules: [list('not_in', newsletter), country] },
    { op: 'AND', rules: [country, engaged('opened', 'within', 30)] },
    { op: 'AND', rules: [engaged('opened', 'not_within', 90)] },
    { op: 'AND', rules: [engaged('clicked', 'within', 1), engaged('clicked', 'within', 1)] },
    { op: 'OR', rules: [engaged('opened', 'within', 7), engaged('clicked', 'not_within', 30)] },
    { op: 'OR', rules: [{ op: 'AND', rules: [country, engaged('opened', 'within', 365)] }, list('in', customers)] },
    { op: 'AND', rules: [{ op: 'OR', rules: [engaged('opened', 'within', 30), list('not_in', newsletter)] }, engaged('opened', 'within', 30)] },
  ];
  for (const definition of cases) await agree(t, definition);
});

t.test('pages walk the whole selection newest first, each contact once', async (t) => {
  const definition = {
    op: 'OR',
    rules: [
      { type: 'field', field: 'country', operator: 'eq', value: 'us' },
      { type: 'engagement', event: 'opened', operator: 'within', days: 30 },
    ],
  };
  const selection = await selectDefinition(sql, fixture.tenantId, definition, { now: NOW, strict: true });
  const seen: { id: string; created_at: Date }[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 1000; pages++) {
    const page: Awaited<ReturnType<typeof selection.page>> = await selection.page({ limit: 97, after });
    seen.push(...page.contacts);
    after = page.next_cursor;
    if (!after) break;
  }
  t.same(seen.map((c) => c.id).sort(), [...evaluate(fixture, definition)].sort(), 'the pages hold exactly the selection');
  t.equal(new Set(seen.map((c) => c.id)).size, seen.length, 'no contact twice');
  const ordered = seen.every((c, i) => i === 0 || seen[i - 1]!.created_at.getTime() >= c.created_at.getTime());
  t.ok(ordered, 'newest first');
  const walked: string[] = [];
  for await (const contacts of selection.pages(250)) walked.push(...contacts.map((c) => c.id));
  t.same(
    walked,
    seen.map((c) => c.id),
    'pages() walks the same pages',
  );
  await t.rejects(selection.page({ limit: 10, after: 'not-a-cursor' }), { name: 'AppError', message: /^after: not a cursor/ });
});

t.test('hostile values are only data: LIKE wildcards, quotes and SQL in values', async (t) => {
  const company = (operator: string, value: string) => ({ op: 'AND', rules: [{ type: 'field', field: 'company', operator, value }] });
  for (const value of ['%', '_', '\\', '100%', 'Pure_', 'c\\', "'", "x'; drop table contacts; --"]) {
    for (const operator of ['eq', 'contains', 'starts_with', 'ends_with', 'not_contains']) await agree(t, company(operator, value));
  }
  const percent = [...evaluate(fixture, company('contains', '%'))];
  t.ok(
    percent.length > 0 && percent.every((id) => fixture.contacts.find((c) => c.id === id)!.columns['company']!.includes('%')),
    "contains '%' matches only a literal %",
  );
  await agree(t, { op: 'AND', rules: [{ type: 'field', field: 'last_name', operator: 'eq', value: "Robert'); DROP TABLE contacts;--" }] });
  await agree(t, { op: 'AND', rules: [{ type: 'field', field: 'custom_fields.industry', operator: 'in', value: ["') or 1=1 --", 'retail'] }] });
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from contacts`;
  t.ok(row!.n >= 3000, 'the contacts are all still there');
});
