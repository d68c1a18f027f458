// Compatibility of the pg-boss schema Mailpath's own SQL reads and calls (below pg-boss's API): the schema version the
// pinned library installs, the columns, enum order and function that SQL relies on, and the queries themselves, on a
// real database, so an upgrade that changes one fails here by name.
import t from 'tap';
import { connect } from '../../../shared/db/connection.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { createJobQueue, startBoss } from '../../../shared/jobs/boss.js';
import { DELIVERY_QUEUE_NAME, readQueueDepths } from '../../../shared/jobs/depth.js';
import { createTestDatabase } from '../../helpers/db.js';

/** Read when a check fails: what the upgrade must re-check. */
const WHERE =
  'see shared/jobs/boss.ts (createJobQueue), shared/jobs/depth.ts (readQueueDepths), shared/db/migrations/100_delivery_queue.sql and the section ' +
  '"Upgrading the libraries used below their API" of docs/architecture.md';

t.test('the pgboss schema', async (t) => {
  const db = await createTestDatabase();
  const log = createLogger('silent');
  const sql = connect(db.url, log, { max: 2 });
  const boss = await startBoss(sql, log, { supervise: false });
  t.teardown(async () => {
    await boss.stop({ graceful: false, wait: true });
    await sql.end();
    await db.drop();
  });

  /** The columns of a pgboss table, name to type as information_schema names it. */
  const columns = async (table: string) =>
    Object.fromEntries(
      (
        await sql<{ column_name: string; data_type: string }[]>`
          select column_name, case when data_type = 'USER-DEFINED' then udt_name else data_type end as data_type
            from information_schema.columns where table_schema = 'pgboss' and table_name = ${table}`
      ).map((c) => [c.column_name, c.data_type]),
    );

  await t.test('pgboss.version: pg-boss 10.4.2 installs schema version 24', async (t) => {
    const rows = await sql<{ version: number }[]>`select version from pgboss.version`;
    t.same(
      rows.map((r) => r.version),
      [24],
      `a new schema version: re-read the pgboss tables and functions below against it, ${WHERE}`,
    );
  });

  await t.test('pgboss.queue: the name column boss.ts and depth.ts read', async (t) => {
    const queue = await columns('queue');
    t.equal(queue['name'], 'text', WHERE);
    t.equal(queue['policy'], 'text', WHERE);
  });

  await t.test('pgboss.job: the columns depth.ts, the delivery-queue migration and the tests read', async (t) => {
    const job = await columns('job');
    t.match(
      job,
      {
        id: 'uuid',
        name: 'text',
        state: 'job_state',
        data: 'jsonb',
        retry_count: 'integer',
        start_after: 'timestamp with time zone',
        created_on: 'timestamp with time zone',
      },
      WHERE,
    );
  });

  await t.test("pgboss.job_state: ordered created < retry < active < completed (depth.ts reads state < 'completed')", async (t) => {
    const labels = await sql<{ label: string }[]>`
      select e.enumlabel as label from pg_enum e join pg_type ty on ty.oid = e.enumtypid join pg_namespace n on n.oid = ty.typnamespace
       where n.nspname = 'pgboss' and ty.typname = 'job_state' order by e.enumsortorder`;
    t.same(
      labels.map((l) => l.label),
      ['created', 'retry', 'active', 'completed', 'cancelled', 'failed'],
      WHERE,
    );
  });

  await t.test('pgboss.create_queue(queue_name text, options json) returns void and reads the options createJobQueue writes', async (t) => {
    const [fn] = await sql<{ args: string; result: string }[]>`
      select pg_get_function_identity_arguments(p.oid) as args, pg_get_function_result(p.oid) as result
        from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'pgboss' and p.proname = 'create_queue'`;
    t.same(fn, { args: 'queue_name text, options json', result: 'void' }, WHERE);
    await createJobQueue(sql, 'pin-test', { retryLimit: 3, retryDelay: 7, retryBackoff: true, expireInSeconds: 60, retentionMinutes: 90 });
    await createJobQueue(sql, 'pin-test', { retryLimit: 9 });
    const [queue] = await sql`
      select policy, retry_limit, retry_delay, retry_backoff, expire_seconds, retention_minutes from pgboss.queue where name = 'pin-test'`;
    t.same(
      queue,
      { policy: 'standard', retry_limit: 3, retry_delay: 7, retry_backoff: true, expire_seconds: 60, retention_minutes: 90 },
      `the options reach the queue row, and a second creation leaves it: ${WHERE}`,
    );
    const queues = await boss.getQueues();
    t.ok(
      queues.some((q) => q.name === 'pin-test' && q.retryLimit === 3),
      `pg-boss sees a queue create_queue made as one of its own: ${WHERE}`,
    );
  });

  await t.test("readQueueDepths (depth.ts): counts pg-boss's waiting and active jobs per queue", async (t) => {
    await createJobQueue(sql, 'pin-depth', {});
    await boss.send('pin-depth', { n: 1 });
    await boss.send('pin-depth', { n: 2 });
    await boss.send('pin-depth', { n: 3 });
    const [fetched] = await boss.fetch('pin-depth');
    t.ok(fetched, WHERE);
    const depths = await readQueueDepths(sql);
    t.same(
      depths.find((d) => d.queue === 'pin-depth'),
      { queue: 'pin-depth', waiting: 2, active: 1 },
      WHERE,
    );
    t.same(
      depths.find((d) => d.queue === 'pin-test'),
      { queue: 'pin-test', waiting: 0, active: 0 },
      `an idle queue counts zero: ${WHERE}`,
    );
    t.ok(
      depths.some((d) => d.queue === DELIVERY_QUEUE_NAME),
      WHERE,
    );
    await boss.complete('pin-depth', fetched!.id);
    t.same(
      (await readQueueDepths(sql)).find((d) => d.queue === 'pin-depth'),
      { queue: 'pin-depth', waiting: 2, active: 0 },
      `a completed job is no longer counted: ${WHERE}`,
    );
  });
});
