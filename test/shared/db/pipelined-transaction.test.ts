// Pipelined transactions: statements issued together run in order inside one transaction, the COMMIT goes out behind the writes, and a failure keeps nothing.
import postgres from 'postgres';
import t from 'tap';
import type { Queryable } from '../../../shared/db/connection.js';
import { pipelinedTransaction } from '../../../shared/db/pipelined-transaction.js';
import { createTestDatabase } from '../../helpers/db.js';

const db = await createTestDatabase();
// One connection: a transaction left open or a connection not released would hang the next test.
const sql = postgres(db.url, { max: 1, onnotice: () => {} });
t.teardown(async () => {
  await sql.end();
  await db.drop();
});
await sql`create table pipe (n int primary key, xact bigint not null)`;

/** A write as query functions in shared/ are written: an async function awaiting its statement (more hops than a bare query). */
async function insertRow(db: Queryable, n: number): Promise<void> {
  await db`insert into pipe (n, xact) values (${n}, txid_current())`;
}

t.test('reads and writes run in the one transaction, the writes before its COMMIT', async (t) => {
  const xact = await pipelinedTransaction(sql, async ({ tx, commit }) => {
    const [[row]] = await Promise.all([tx<{ x: string }[]>`select txid_current()::text as x`]);
    await commit([insertRow(tx, 1), insertRow(tx, 2), insertRow(tx, 3)]);
    return row!.x;
  });
  const rows = await sql<{ n: number; xact: string }[]>`select n, xact::text from pipe order by n`;
  t.same(
    rows.map((r) => r.n),
    [1, 2, 3],
  );
  t.ok(
    rows.every((r) => r.xact === xact),
    'every write ran in the transaction of the reads (none after its COMMIT, on its own)',
  );
});

t.test('a failing write keeps nothing of the transaction and is thrown', async (t) => {
  await t.rejects(
    pipelinedTransaction(sql, async ({ tx, commit }) => {
      await commit([insertRow(tx, 10), insertRow(tx, 1), insertRow(tx, 11)]);
    }),
    { code: '23505' },
  );
  t.same((await sql`select n from pipe where n >= 10`).length, 0, 'the writes before and after the failure are rolled back');
  t.same((await sql`select 1 as ok`)[0], { ok: 1 }, 'the connection is back in the pool, outside any transaction');
});

t.test('a body that throws before committing rolls back', async (t) => {
  await t.rejects(
    pipelinedTransaction(sql, async ({ tx }) => {
      await insertRow(tx, 20);
      throw new Error('changed my mind');
    }),
    { message: 'changed my mind' },
  );
  t.same((await sql`select n from pipe where n = 20`).length, 0);
  // Without a commit call the body's statements are committed after it.
  await pipelinedTransaction(sql, ({ tx }) => insertRow(tx, 21));
  t.same((await sql`select n from pipe where n = 21`).length, 1);
});

t.test('genericPlans: the transaction plans its statements once (force_generic_plan), and only it', async (t) => {
  const setting = async (db: Queryable) => (await db<{ plan_cache_mode: string }[]>`show plan_cache_mode`)[0]!.plan_cache_mode;
  const inside = await pipelinedTransaction(sql, async ({ tx }) => setting(tx), { genericPlans: true });
  t.equal(inside, 'force_generic_plan');
  t.equal(await pipelinedTransaction(sql, async ({ tx }) => setting(tx)), 'auto', 'without the option, the server default');
  // One connection in the pool: the same session, after the transaction.
  t.equal(await setting(sql), 'auto', 'set for the transaction only: the pooled connection keeps the default');
});
