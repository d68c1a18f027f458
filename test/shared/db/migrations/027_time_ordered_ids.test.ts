// uuid_v7(): RFC 9562 version 7 ids carrying the current Unix milliseconds, used for contacts so bulk inserts append to their indexes.
import postgres from 'postgres';
import t from 'tap';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 1, onnotice: () => {} });
t.teardown(async () => {
  await sql.end();
  await db.drop();
});

const millisOf = (id: string) => parseInt(id.replace(/-/g, '').slice(0, 12), 16);

t.test('version 7, variant 10, the time of the call in the first 48 bits, unique', async (t) => {
  const before = Date.now();
  const rows = await sql<{ id: string }[]>`select uuid_v7()::text as id from generate_series(1, 2000)`;
  const after = Date.now();
  const ids = rows.map((r) => r.id);
  t.equal(new Set(ids).size, ids.length, 'no repeats');
  for (const id of ids.slice(0, 50)) {
    t.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, `${id} is version 7, variant 10`);
    t.ok(millisOf(id) >= before - 5 && millisOf(id) <= after + 5, 'carries the current milliseconds');
  }
  const millis = ids.map(millisOf);
  t.ok(
    millis.every((m, i) => i === 0 || m >= millis[i - 1]!),
    'the millisecond part never goes back within a statement',
  );
});

t.test('a new contact gets one by default', async (t) => {
  const tenantId = await insertTenant(sql as never);
  const [row] = await sql<
    { id: string }[]
  >`insert into contacts (tenant_id, email, created_at, updated_at) values (${tenantId}, 'a@b.example', now(), now()) returning id::text`;
  t.match(row!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7/);
});
