// Pipelined transactions on the embedded backend (PGlite behind its socket, one connection, no prepared statements): the same order, atomicity and rollback
// as on PostgreSQL.
import { rmSync } from 'node:fs';
import t from 'tap';
import { connect } from '../../../shared/db/connection.js';
import { startEmbeddedPostgres } from '../../../shared/db/embedded.js';
import { pipelinedTransaction } from '../../../shared/db/pipelined-transaction.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { seededDataDir } from '../../helpers/embedded-data-dir.js';
import { stopOnTeardown } from '../../helpers/net.js';

const log = createLogger('silent');
const dir = await seededDataDir('mailpath-pipelined-');
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const embedded = stopOnTeardown(t, await startEmbeddedPostgres(dir, log));
// As openDatabase connects to it.
const sql = connect(embedded.url, log, { max: 1, prepare: false });
t.teardown(() => sql.end({ timeout: 5 }));
await sql`create table pipe (n int primary key, xact bigint not null)`;

t.test('reads, writes and COMMIT pipelined on the one connection; a failure keeps nothing', async (t) => {
  const xact = await pipelinedTransaction(sql, async ({ tx, commit }) => {
    const [[row]] = await Promise.all([tx<{ x: string }[]>`select txid_current()::text as x`]);
    const insert = async (n: number) => {
      await tx`insert into pipe (n, xact) values (${n}, txid_current())`;
    };
    await commit([insert(1), insert(2)]);
    return row!.x;
  });
  t.same(
    (await sql<{ xact: string }[]>`select xact::text from pipe order by n`).map((r) => r.xact),
    [xact, xact],
  );
  await t.rejects(
    pipelinedTransaction(sql, async ({ tx, commit }) => {
      await commit([tx`insert into pipe (n, xact) values (3, 0)`.execute(), tx`insert into pipe (n, xact) values (1, 0)`.execute()]);
    }),
    { code: '23505' },
  );
  t.same(
    (await sql`select n from pipe order by n`).map((r) => r['n']),
    [1, 2],
    'the failed transaction left nothing',
  );
});
