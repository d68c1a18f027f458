// The embedded database (PGlite) accepts the per-transaction deadline: tenant-shaped queries run there as on PostgreSQL (it cannot cancel a running
// statement, so there the caps are the fence), and the setting ends with the transaction.
import t from 'tap';
import { loadConfig } from '../../../shared/config/index.js';
import { connect } from '../../../shared/db/connection.js';
import { TenantQueries } from '../../../shared/db/deadline.js';
import { startEmbeddedPostgres } from '../../../shared/db/embedded.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { seededDataDir } from '../../helpers/embedded-data-dir.js';
import { stopOnTeardown } from '../../helpers/net.js';
import { rmSync } from 'node:fs';

t.test('runs and streams within a deadline on PGlite, which keeps no setting afterwards', async (t) => {
  const dir = await seededDataDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = createLogger('silent');
  const embedded = stopOnTeardown(t, await startEmbeddedPostgres(dir, log));
  // As openDatabase opens it: one connection, no prepared statements.
  const sql = connect(embedded.url, log, { max: 1, prepare: false });
  t.teardown(() => sql.end({ timeout: 5 }));
  const queries = new TenantQueries(sql, loadConfig({}).queries);
  const tenant = '00000000-0000-4000-8000-000000000001';

  const inside = await queries.run(
    tenant,
    'segment',
    async (tx) => (await tx<{ timeout: string }[]>`select current_setting('statement_timeout') as timeout`)[0]!.timeout,
  );
  t.equal(inside, '5s', 'the deadline is set inside the transaction');
  const rows = await queries.stream(tenant, 'export', (tx) => tx<{ n: number }[]>`select g as n from generate_series(1, 2500) g`.cursor(1000), { prefetch: 1 });
  let seen = 0;
  for await (const page of rows) seen += page.length;
  t.equal(seen, 2500, 'a cursor is read to its end');
  const [after] = await sql<{ timeout: string }[]>`select current_setting('statement_timeout') as timeout`;
  t.equal(after!.timeout, '0', 'and the setting ended with its transaction');
});
