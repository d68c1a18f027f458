// The events of a send are read by range on (send_id, type, occurred_at) (migration 104): a hit batch's recent-clicks
// read and the "has this send an event of this type" checks visit only the rows they return, not every event of the
// send. Checked on the plans PostgreSQL picks over a table with a history, as autovacuum would have analyzed it.
import postgres from 'postgres';
import t from 'tap';
import { recentClicksQuery } from '../../../../shared/engagement/tracking/queries.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const db = await createTestDatabase();
const sql = postgres(db.url, { max: 1, onnotice: () => {} });
t.teardown(async () => {
  await sql.end();
  await db.drop();
});

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Index Cond'?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

type Explained = { 'QUERY PLAN': { Plan: PlanNode }[] }[];

function planOf([row]: Explained): PlanNode[] {
  return nodes(row!['QUERY PLAN'][0]!.Plan);
}

async function plan(query: string, params: unknown[]): Promise<PlanNode[]> {
  return planOf(await sql.unsafe<Explained>(`explain (format json) ${query}`, params as never[]));
}

const tenantId = await insertTenant(sql);
// 2,000 sends with a delivery, an open and three clicks each, spread over 30 days.
await sql`
  insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
  select gen_random_uuid(), ${tenantId}, 'api', 'live', 'delivered', 'n@shop.example', 'r' || g || '@dest.example', 'Hi', 'm' || g || '@shop.example',
  'b@shop.example', t, t
  from generate_series(1, 2000) g, lateral (select now() - (g % 30) * interval '1 day' as t) at`;
await sql`
  insert into events (id, tenant_id, type, send_id, message_id, recipient, detail, occurred_at)
  select gen_random_uuid(), s.tenant_id, k.type, s.id, s.message_id, s.to_email,
    case when k.type = 'click' then jsonb_build_object('url', 'https://shop.example/' || k.n) else '{}'::jsonb end, s.created_at + k.n * interval '1 minute'
  from sends s, (values (1, 'delivered'), (2, 'open'), (3, 'click'), (4, 'click'), (5, 'click')) as k(n, type)`;
await sql`analyze sends, events`;
const some = (await sql<{ id: string }[]>`select id from sends order by id limit 25`).map((r) => r.id);

t.test("a batch's recent clicks: an index range on send, type and time", async (t) => {
  // The recorder's own statement (shared/engagement/tracking/queries.ts), explained as it is sent.
  const steps = planOf(await sql<Explained>`explain (format json) ${recentClicksQuery(sql, some, new Date(Date.now() - 5_000))}`);
  const scan = steps.find((s) => s['Index Name'] === 'events_send_type_time_idx');
  t.ok(scan, `the composite index is used (plan: ${steps.map((s) => `${s['Node Type']} ${s['Index Name'] ?? ''}`).join(' → ')})`);
  t.match(scan?.['Index Cond'] ?? '', /send_id.*type.*occurred_at/s, 'send, type and time all bound the range');
  t.notOk(
    steps.some((s) => s['Node Type'] === 'Seq Scan'),
    'no sequential scan',
  );
});

t.test('"does this send have an event of this type": the same index, bound on send and type', async (t) => {
  const steps = await plan(`select 1 from events where send_id = $1 and type = $2 limit 1`, [some[0], 'delivered']);
  const scan = steps.find((s) => s['Index Name'] === 'events_send_type_time_idx');
  t.ok(scan, 'the composite index is used');
  t.match(scan?.['Index Cond'] ?? '', /send_id.*type/s);
});

t.test('the send_id-only index it replaced is gone (an event write maintains as many indexes as before)', async (t) => {
  const indexes = (await sql<{ indexname: string }[]>`select indexname from pg_indexes where tablename = 'events' order by 1`).map((r) => r.indexname);
  t.ok(indexes.includes('events_send_type_time_idx'));
  t.notOk(indexes.includes('events_send_idx'));
});

t.test('the generic plan the recorder runs it with (plan_cache_mode force_generic_plan) is the same index range', async (t) => {
  // The recorder's transactions plan their statements once per connection (shared/db/pipelined-transaction.ts,
  // genericPlans): a generic plan knows neither the batch's sends nor its time, so it must be good for any.
  const { string } = await recentClicksQuery(sql, some, new Date()).describe();
  const steps = await sql.begin(async (tx) => {
    await tx`set local plan_cache_mode = force_generic_plan`;
    await tx.unsafe(`prepare recent_clicks_generic as ${string}`);
    const [row] = await tx.unsafe<Explained>(`explain (format json) execute recent_clicks_generic('{${some.join(',')}}', now() - interval '5 seconds')`);
    await tx`deallocate recent_clicks_generic`;
    return row;
  });
  const plan = planOf([steps!]);
  const scan = plan.find((s) => s['Index Name'] === 'events_send_type_time_idx');
  t.ok(scan, `the composite index is used (plan: ${plan.map((s) => `${s['Node Type']} ${s['Index Name'] ?? ''}`).join(' → ')})`);
  t.match(scan?.['Index Cond'] ?? '', /send_id.*type.*occurred_at/s, 'send, type and time all bound the range');
  t.notOk(
    plan.some((s) => s['Node Type'] === 'Seq Scan'),
    'no sequential scan',
  );
});
