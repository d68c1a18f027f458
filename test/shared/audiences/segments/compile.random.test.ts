// Segment SQL against an independent model: random nested definitions (groups, field, list and engagement rules) over a few thousand generated contacts.
import t from 'tap';
import { connect } from '../../../../shared/db/connection.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { selectDefinition } from '../../../../shared/audiences/segments/service.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { buildFixture, NOW, prng } from './fixture.js';
import { evaluate, randomDefinition } from './model.js';

// SEGMENT_SEED replays a failing run; SEGMENT_RUNS runs more (or fewer) definitions.
const SEED = Number(process.env['SEGMENT_SEED'] ?? 20260316);
const db = await createTestDatabase();
const sql = connect(db.url, createLogger('silent'), { max: 2 });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await db.drop();
});
const fixture = await buildFixture(sql, SEED, 3000);
const inScope = fixture.contacts.filter((c) => c.tenant_id === fixture.tenantId && c.email !== null && c.status !== 'deleted').length;

t.test('random nested definitions agree with the model', async (t) => {
  const rand = prng(SEED);
  const runs = Number(process.env['SEGMENT_RUNS'] ?? 200);
  let nonTrivial = 0;
  for (let i = 0; i < runs; i++) {
    const definition = randomDefinition(rand, fixture);
    const selection = await selectDefinition(sql, fixture.tenantId, definition, { now: NOW, strict: true });
    const { contacts } = await selection.page({ limit: 10_000 });
    const expected = [...evaluate(fixture, definition)].sort();
    t.same(contacts.map((c) => c.id).sort(), expected, `seed ${SEED}: ${JSON.stringify(definition)}`);
    const n = expected.length;
    t.equal(await selection.count(), n, 'the count agrees');
    if (n > 0 && n < inScope) nonTrivial++;
  }
  t.ok(nonTrivial > runs / 4, `${nonTrivial} of ${runs} random definitions selected some but not all contacts`);
});
