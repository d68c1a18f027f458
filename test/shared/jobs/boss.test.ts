// pg-boss over postgres.js: jobs round-trip, enqueue inside transactions, delayed jobs, queues created once by racing processes.
import t from 'tap';
import { connect } from '../../../shared/db/connection.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { bossDb, createJobQueue, startBoss } from '../../../shared/jobs/boss.js';
import { createTestDatabase } from '../../helpers/db.js';

t.test('pg-boss runs on the shared postgres.js pool', async (t) => {
  const db = await createTestDatabase();
  const log = createLogger('silent');
  const sql = connect(db.url, log, { max: 4 });
  const boss = await startBoss(sql, log, { supervise: false });
  t.teardown(async () => {
    await boss.stop({ graceful: false, wait: true });
    await sql.end();
    await db.drop();
  });
  await boss.createQueue('test-jobs');

  await t.test('jobs round-trip with their JSON data intact', async (t) => {
    const id = await boss.send('test-jobs', { to: 'a@example.test', nested: { n: 1, list: [1, 2] } });
    t.type(id, 'string');
    const [job] = await boss.fetch<{ to: string; nested: { n: number; list: number[] } }>('test-jobs');
    t.same(job!.data, { to: 'a@example.test', nested: { n: 1, list: [1, 2] } });
    await boss.complete('test-jobs', job!.id, { delivered: true });
    const done = await boss.getJobById('test-jobs', job!.id);
    t.equal(done!.state, 'completed');
    t.same(done!.output, { delivered: true }, 'completion output stored as JSON, not a JSON string');
  });

  await t.test('a job sent inside a transaction commits with it', async (t) => {
    await sql.begin(async (tx) => {
      await boss.send('test-jobs', { committed: true }, { db: bossDb(tx) } as never);
    });
    const jobs = await boss.fetch<{ committed: boolean }>('test-jobs');
    t.equal(jobs.length, 1);
    t.same(jobs[0]!.data, { committed: true });
    await boss.complete('test-jobs', jobs[0]!.id);
  });

  await t.test('a job sent inside a rolled-back transaction vanishes', async (t) => {
    await t.rejects(
      sql.begin(async (tx) => {
        await boss.send('test-jobs', { committed: false }, { db: bossDb(tx) } as never);
        throw new Error('abort the transaction');
      }),
      /abort the transaction/,
    );
    const jobs = await boss.fetch('test-jobs');
    t.equal(jobs.length, 0, 'no job left behind');
  });

  await t.test('startAfter defers a job', async (t) => {
    await boss.send('test-jobs', { later: true }, { startAfter: new Date(Date.now() + 3_600_000) });
    t.equal((await boss.fetch('test-jobs')).length, 0, 'not fetchable before its time');
  });
});

t.test('createJobQueue: two processes creating the same new queues at once both succeed', async (t) => {
  const db = await createTestDatabase();
  const log = createLogger('silent');
  const sqlA = connect(db.url, log, { max: 4 });
  const sqlB = connect(db.url, log, { max: 4 });
  const [a, b] = [await startBoss(sqlA, log, { supervise: false }), await startBoss(sqlB, log, { supervise: false })];
  t.teardown(async () => {
    await a.stop({ graceful: false, wait: true });
    await b.stop({ graceful: false, wait: true });
    await sqlA.end();
    await sqlB.end();
    await db.drop();
  });
  const names = Array.from({ length: 8 }, (_, i) => `race-${i}`);
  await Promise.all(names.flatMap((name) => [createJobQueue(sqlA, name, { retryLimit: 2 }), createJobQueue(sqlB, name, { retryLimit: 2 })]));
  for (const name of names) t.match(await a.getQueue(name), { name, retryLimit: 2 });
});
