// Segment SQL on the embedded backend (PGlite): the same answers as the model, so a no-install start evaluates segments like PostgreSQL does.
import { rmSync } from 'node:fs';
import t from 'tap';
import { connect } from '../../../../shared/db/connection.js';
import { startEmbeddedPostgres } from '../../../../shared/db/embedded.js';
import { migrate } from '../../../../shared/db/migrate.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import { seededDataDir } from '../../../helpers/embedded-data-dir.js';
import { selectDefinition } from '../../../../shared/audiences/segments/service.js';
import { buildFixture, NOW, prng } from './fixture.js';
import { evaluate, randomDefinition } from './model.js';

const log = createLogger('silent');
const dataDir = await seededDataDir('mailpath-segments-embedded-');
const embedded = await startEmbeddedPostgres(dataDir, log);
// One connection, unprepared: as openDatabase connects to the embedded server.
const sql = connect(embedded.url, log, { max: 1, prepare: false });
t.teardown(async () => {
  await sql.end({ timeout: 5 });
  await embedded.stop();
  rmSync(dataDir, { recursive: true, force: true });
});
await migrate(sql);
const fixture = await buildFixture(sql, 99, 300);

t.test('random definitions agree with the model on PGlite', async (t) => {
  const rand = prng(99);
  const engagement = (operator: string) => ({ type: 'engagement', event: 'opened', operator, days: 30 });
  const definitions = [
    { op: 'AND', rules: [engagement('within'), { type: 'list', operator: 'not_in', list_id: fixture.lists[0] }] },
    { op: 'OR', rules: [engagement('not_within'), { type: 'list', operator: 'in', list_id: fixture.lists[1] }] },
    ...Array.from({ length: 60 }, () => randomDefinition(rand, fixture)),
  ];
  for (const definition of definitions) {
    const selection = await selectDefinition(sql, fixture.tenantId, definition, { now: NOW, strict: true });
    const { contacts } = await selection.page({ limit: 1000 });
    t.same(contacts.map((c) => c.id).sort(), [...evaluate(fixture, definition)].sort(), JSON.stringify(definition));
    t.equal(await selection.count(), contacts.length);
  }
});
