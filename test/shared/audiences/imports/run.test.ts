// The import job: a stopped run hands over to a continuation job and the next run resumes after the committed rows; two runs of one import write each batch
// once; a batch written by another worker is refused.
import t from 'tap';
import { buildTestApp, registerTenant } from '../../../helpers/app.js';
import { addList, runToEnd, uploadImport } from '../../../helpers/imports.js';
import { Superseded, writeBatch } from '../../../../shared/audiences/imports/batch.js';
import { IMPORT_JOBS } from '../../../../shared/audiences/imports/jobs.js';
import { findImportById } from '../../../../shared/audiences/imports/queries.js';
import { runImport } from '../../../../shared/audiences/imports/run.js';

const env = { MAILPATH_CONFIG__LIMITS__IMPORTS__BATCH_SIZE: '4', MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__BULK: '100000' };

function csvOf(rows: number, prefix: string): string {
  let file = 'email,first_name\n';
  for (let i = 0; i < rows; i++) file += i % 10 === 9 ? `broken-${i}\n` : `${prefix}${i}@example.com,N${i}\n`;
  return file;
}

t.test('import runs', async (t) => {
  const { app, ctx, sql } = await buildTestApp(t, { env });
  const owner = await registerTenant(app);
  const counts = async (id: string) => {
    const row = (await findImportById(sql, id))!;
    return { status: row.status, rows_total: row.rows_total, rows_done: row.rows_done, inserted: row.inserted, updated: row.updated, invalid: row.invalid };
  };
  const jobsOf = async (id: string) =>
    (await sql<{ n: number }[]>`select count(*)::int as n from pgboss.job where name = ${IMPORT_JOBS} and data->>'import_id' = ${id} and state = 'created'`)[0]!
      .n;

  await t.test('a run asked to stop commits its batch, queues a continuation, and the next run resumes exactly', async (t) => {
    const up = await uploadImport(app, owner.token, csvOf(30, 'stop'));
    const id = up.body.data.id;
    t.equal(await jobsOf(id), 1, 'the upload queued one job');
    t.equal(await runImport(ctx, id, { stopping: () => true }), 'continued');
    t.match(await counts(id), { status: 'running', rows_done: 4, rows_total: null, inserted: 4 });
    t.equal(await jobsOf(id), 2, 'a continuation job was queued with the batch');
    t.equal(await runToEnd(ctx, id), 'completed');
    t.same(await counts(id), { status: 'completed', rows_total: 30, rows_done: 30, inserted: 27, updated: 0, invalid: 3 });
    const [made] = await sql<{ n: number }[]>`select count(*)::int as n from contacts where tenant_id = ${owner.tenantId} and email like 'stop%'`;
    t.equal(made!.n, 27);
    const errors = await sql<{ line: number }[]>`select line::int from contact_import_errors where import_id = ${id} order by line`;
    t.same(
      errors.map((e) => e.line),
      [11, 21, 31],
    );
    t.equal(await runImport(ctx, id), 'nothing', 'a job of a finished import does nothing');
  });

  await t.test('two runs of one import at once write every batch once', async (t) => {
    const listId = await addList(sql, owner.tenantId, 'Concurrent');
    const up = await uploadImport(app, owner.token, csvOf(60, 'both'), { query: { list_id: listId } });
    const id = up.body.data.id;
    const outcomes = await Promise.all([runToEnd(ctx, id), runToEnd(ctx, id)]);
    t.ok(outcomes.includes('completed'), `one run completes (${outcomes.join(', ')})`);
    t.same(await counts(id), { status: 'completed', rows_total: 60, rows_done: 60, inserted: 54, updated: 0, invalid: 6 });
    const [members] = await sql<{ c: number }[]>`select member_count::int as c from lists where id = ${listId}`;
    t.equal(members!.c, 54);
  });

  await t.test('a batch whose progress moved on is refused and writes nothing', async (t) => {
    const up = await uploadImport(app, owner.token, 'email\nsup@example.com\n');
    const id = up.body.data.id;
    const row = (await findImportById(sql, id))!;
    await sql`update contact_imports set status = 'running' where id = ${id}`;
    const ctxBatch = { sql, boss: ctx.boss, importId: id, tenantId: owner.tenantId, options: row.options, catalog: [] };
    const rows = [{ ok: true as const, row: { line: 2, email: 'sup@example.com', profile: {}, status: null, set: {}, customKeys: [] } }];
    await t.rejects(writeBatch(ctxBatch, 7, rows, { kind: 'more' }, new Date()), Superseded);
    t.match(await counts(id), { rows_done: 0, inserted: 0 });
    t.notOk((await sql`select 1 from contacts where email = 'sup@example.com'`).length);
  });

  await t.test('a list deleted before the run resumes fails the import, saying so', async (t) => {
    const listId = await addList(sql, owner.tenantId, 'Doomed');
    const up = await uploadImport(app, owner.token, csvOf(12, 'doom'), { query: { list_id: listId } });
    const id = up.body.data.id;
    t.equal(await runImport(ctx, id, { stopping: () => true }), 'continued');
    await sql`delete from lists where id = ${listId}`;
    t.equal(await runToEnd(ctx, id), 'failed');
    const row = (await findImportById(sql, id))!;
    t.match(row, { status: 'failed', rows_done: 4, error: /no longer exists/ });
  });
});
