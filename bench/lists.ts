// Benchmark: a list of 1,000,000 members — reading its member_count, member pages (first, deep, filtered), walking its member ids, batch adds and removes,
// deleting it.
//
// Goal: reading a list with its member_count under 50 ms (p99) at 1,000,000 members: the count is a column kept
// by statement triggers, never counted per request. The other figures are printed for reference.
// Needs PostgreSQL at 127.0.0.1:5432 (BENCH_DATABASE_URL overrides); creates and drops a database of its own.
// BENCH_LIST_MEMBERS (default 1,000,000) members: the first 100 batches of 1,000 go through addMembers (timed),
// the rest are inserted in SQL, 100,000 per statement, through the same triggers. 1% of the contacts are unsubscribed.
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import type { AuditActor } from '../shared/operations/audit/log.js';
import { systemClock } from '../shared/kernel/clock.js';
import { connect, type Sql } from '../shared/db/connection.js';
import { migrate } from '../shared/db/migrate.js';
import { countMembersByStatus } from '../shared/audiences/lists/member-queries.js';
import { addMembers, eachMemberIdBatch, listMemberPage, removeMembers } from '../shared/audiences/lists/members.js';
import { createList, getList, removeList } from '../shared/audiences/lists/service.js';
import { createLogger } from '../shared/kernel/log.js';
import { insertTenant } from '../shared/accounts/tenants/queries.js';
import { ADMIN_URL, benchDatabaseName } from './lib/bench-database.js';

const MEMBERS = Math.min(5_000_000, Math.max(200_000, Math.floor(Number(process.env['BENCH_LIST_MEMBERS'] ?? 1_000_000)) || 1_000_000));
const API_BATCHES = 100;
const BATCH = 1000;
const GOAL = { countP99Ms: 50 };
const ACTOR: AuditActor = { type: 'system', id: 'bench' };

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const out = (lines: string[]) => process.stdout.write(`${lines.join('\n')}\n`);
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? 0;
}

/** Runs fn `runs` times one after the other; prints and returns p50 / p99 / max in ms. */
async function timed(label: string, runs: number, fn: (i: number) => Promise<unknown>): Promise<{ p50: number; p99: number; max: number }> {
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn(i);
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  const figures = { p50: percentile(ms, 50), p99: percentile(ms, 99), max: ms[ms.length - 1] ?? 0 };
  out([`   ${label}: p50 ${fmt(figures.p50, 2)} ms, p99 ${fmt(figures.p99, 2)} ms, max ${fmt(figures.max, 2)} ms (${runs} runs)`]);
  return figures;
}

async function seed(sql: Sql, deps: { sql: Sql; clock: typeof systemClock }, tenantId: string, listId: string): Promise<void> {
  let t0 = performance.now();
  await sql`
    insert into contacts (tenant_id, email, status, first_name, last_name, created_at, updated_at)
    select ${tenantId}, 'member' || g || '@bench.example', case when g % 100 = 0 then 'unsubscribed' else 'active' end,
           'First' || g, 'Last' || g, now(), now()
    from generate_series(1, ${MEMBERS + 2 * BATCH}::int) g`;
  out([`   ${fmt(MEMBERS + 2 * BATCH)} contacts inserted in ${fmt((performance.now() - t0) / 1000, 1)} s`]);

  t0 = performance.now();
  const ms: number[] = [];
  for (let b = 0; b < API_BATCHES; b++) {
    const emails = Array.from({ length: BATCH }, (_, i) => `member${b * BATCH + i + 1}@bench.example`);
    const s0 = performance.now();
    const res = await addMembers(deps, tenantId, ACTOR, listId, { emails });
    ms.push(performance.now() - s0);
    if (res.totals.added !== BATCH) throw new Error(`batch ${b}: ${JSON.stringify(res.totals)}`);
  }
  ms.sort((a, b) => a - b);
  out([
    `   ${API_BATCHES} batches of ${BATCH} addresses through addMembers into a growing list: p50 ${fmt(percentile(ms, 50), 1)} ms, p99 ` +
      `${fmt(percentile(ms, 99), 1)} ms per batch`,
  ]);

  t0 = performance.now();
  for (let from = API_BATCHES * BATCH; from < MEMBERS; from += 100_000) {
    // Later added_at than the batches above, one stamp per chunk (ties broken by the contact id).
    await sql`
      insert into list_members (list_id, contact_id, tenant_id, added_at)
      select ${listId}, id, ${tenantId}, now() + ${from}::int * interval '1 millisecond'
      from contacts
      where tenant_id = ${tenantId} and email in (
        select 'member' || g || '@bench.example' from generate_series(${from + 1}::int, ${Math.min(MEMBERS, from + 100_000)}::int) g)`;
  }
  out([`   the other ${fmt(MEMBERS - API_BATCHES * BATCH)} members inserted in SQL in ${fmt((performance.now() - t0) / 1000, 1)} s`]);
  await sql`vacuum analyze contacts`;
  await sql`vacuum analyze list_members`;
  await sql`vacuum analyze lists`;
}

export default async function runListsBench(): Promise<{ countP99Ms: number; met: boolean }> {
  const dbName = benchDatabaseName();
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  const dbUrl = new URL(ADMIN_URL);
  dbUrl.pathname = `/${dbName}`;
  let sql: Sql | undefined;
  try {
    await admin.unsafe(`create database "${dbName}"`);
    sql = connect(dbUrl.toString(), createLogger('silent'), { max: 4 });
    await migrate(sql);
    const deps = { sql, clock: systemClock };
    const tenant = await insertTenant(sql, { name: 'Bench', slug: 'bench-lists' });
    const list = await createList(deps, tenant.id, ACTOR, { name: 'Everyone' });
    out([`lists bench: ${cpus().length} cores, load average ${load()}; ${fmt(MEMBERS)} members`]);
    await seed(sql, deps, tenant.id, list.id);

    const read = await getList(sql, tenant.id, list.id);
    if (read.member_count !== MEMBERS) throw new Error(`member_count ${read.member_count}, expected ${MEMBERS}`);
    out(['1. reading the list with its member_count (getList, GET /lists/{id})']);
    const count = await timed(`member_count ${fmt(read.member_count)}`, 200, () => getList(sql!, tenant.id, list.id));
    const met = count.p99 < GOAL.countP99Ms;
    out([`   goal: p99 < ${GOAL.countP99Ms} ms: ${met ? 'goal met' : 'GOAL MISSED'}`]);

    out(['2. member pages (listMemberPage, GET /lists/{id}/members, 200 per page)']);
    const first = await listMemberPage(sql, tenant.id, list.id, { limit: 200 });
    await timed('first page', 50, () => listMemberPage(sql!, tenant.id, list.id, { limit: 200 }));
    // A cursor near the end: the keyset index seeks straight to it.
    const [deep] = await sql<{ contact_id: string; us: string }[]>`
      select contact_id, (extract(epoch from added_at) * 1000000)::bigint::text as us from list_members
      where list_id = ${list.id} order by added_at desc, contact_id desc offset 1000 limit 1`;
    const deepCursor = Buffer.from(`${deep!.us}|${deep!.contact_id}`, 'utf8').toString('base64url');
    await timed('a page after member 999,000 (cursor)', 50, () => listMemberPage(sql!, tenant.id, list.id, { limit: 200, after: deepCursor }));
    await timed(`next page (cursor of the first)`, 50, () => listMemberPage(sql!, tenant.id, list.id, { limit: 200, after: first.next_cursor! }));
    await timed('?status=unsubscribed first page (1% of members, with its counted total)', 5, () =>
      listMemberPage(sql!, tenant.id, list.id, { limit: 200, status: 'unsubscribed' }),
    );
    await timed('   of which the counted total alone', 5, () => countMembersByStatus(sql!, list.id, ['unsubscribed']));

    out(['3. walking every member id (eachMemberIdBatch, 1,000 per query: the campaign fan-out)']);
    let t0 = performance.now();
    let walked = 0;
    for await (const ids of eachMemberIdBatch(sql, tenant.id, list.id, { batchSize: 1000 })) walked += ids.length;
    const walkS = (performance.now() - t0) / 1000;
    out([`   ${fmt(walked)} ids in ${fmt(walkS, 1)} s (${fmt(walked / walkS)} ids/s)`]);

    out(['4. batches against the full list']);
    const fresh = Array.from({ length: BATCH }, (_, i) => `member${MEMBERS + i + 1}@bench.example`);
    await timed('add 1,000 new members by address', 1, () => addMembers(deps, tenant.id, ACTOR, list.id, { emails: fresh }));
    await timed('add the same 1,000 again (all already_member)', 1, () => addMembers(deps, tenant.id, ACTOR, list.id, { emails: fresh }));
    await timed('remove 1,000 members by address', 1, () => removeMembers(deps, tenant.id, ACTOR, list.id, { emails: fresh }));
    if ((await getList(sql, tenant.id, list.id)).member_count !== MEMBERS) throw new Error('member_count drifted');

    out(['5. deleting the list (its members cascade)']);
    t0 = performance.now();
    await removeList(deps, tenant.id, ACTOR, list.id);
    const deleteS = (performance.now() - t0) / 1000;
    const [left] = await sql<{ n: number }[]>`select count(*)::int as n from list_members`;
    if (left!.n !== 0) throw new Error(`${left!.n} members left after the list was deleted`);
    out([`   ${fmt(MEMBERS)} members deleted with the list in ${fmt(deleteS, 1)} s`, `   load average after: ${load()}`, '']);
    return { countP99Ms: count.p99, met };
  } finally {
    await sql?.end({ timeout: 5 });
    await admin.unsafe(`drop database if exists "${dbName}" with (force)`).catch(() => undefined);
    await admin.end();
  }
}
