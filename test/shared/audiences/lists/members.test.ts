// List membership below the API: member_count exact through conflicts, removals, list, contact and tenant deletion and concurrent batches; the member-id pager.
import t from 'tap';
import type { AuditActor } from '../../../../shared/operations/audit/log.js';
import { systemClock } from '../../../../shared/kernel/clock.js';
import { connect, type Sql } from '../../../../shared/db/connection.js';
import { addMembers, eachMemberIdBatch, listMemberIdPage, removeMembers } from '../../../../shared/audiences/lists/members.js';
import { createList, removeList } from '../../../../shared/audiences/lists/service.js';
import { createLogger } from '../../../../shared/kernel/log.js';
import type { TestLike } from '../../../helpers/app.js';
import { createTestDatabase } from '../../../helpers/db.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const ACTOR: AuditActor = { type: 'system', id: 'test' };

async function setup(t: TestLike, max = 4): Promise<{ sql: Sql; deps: { sql: Sql; clock: typeof systemClock }; tenant: string }> {
  const db = await createTestDatabase();
  const sql = connect(db.url, createLogger('silent'), { max });
  t.teardown(async () => {
    await sql.end({ timeout: 5 });
    await db.drop();
  });
  return { sql, deps: { sql, clock: systemClock }, tenant: await insertTenant(sql) };
}

/** Contacts inserted directly (email_hash is set by the trigger); returns their ids in the order of the addresses. */
async function insertContacts(sql: Sql, tenantId: string, emails: string[], status = 'active'): Promise<string[]> {
  const rows = await sql<{ id: string; email: string }[]>`
    insert into contacts (tenant_id, email, status, created_at, updated_at)
    select ${tenantId}, e, ${status}, now(), now() from unnest(${emails}::text[]) as e
    returning id, email`;
  const byEmail = new Map(rows.map((r) => [r.email, r.id]));
  return emails.map((e) => byEmail.get(e)!);
}

const addresses = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.test`);

/** The stored counter and the real number of rows, to compare. */
async function counts(sql: Sql, listId: string): Promise<{ stored: number; real: number }> {
  const [row] = await sql<{ stored: number; real: number }[]>`
    select (select member_count::int from lists where id = ${listId}) as stored,
           (select count(*)::int from list_members where list_id = ${listId}) as real`;
  return row!;
}

t.test('member_count counts only inserted and deleted rows', async (t) => {
  const { sql, deps, tenant } = await setup(t);
  const list = await createList(deps, tenant, ACTOR, { name: 'Main' });
  const ids = await insertContacts(sql, tenant, addresses('m', 10));
  let res = await addMembers(deps, tenant, ACTOR, list.id, { contact_ids: ids.slice(0, 6) });
  t.equal(res.totals.added, 6);
  t.same(await counts(sql, list.id), { stored: 6, real: 6 });
  // Four conflicts (already members), four new, and a repeat: only the new rows count.
  res = await addMembers(deps, tenant, ACTOR, list.id, { contact_ids: [...ids.slice(2, 10), ids[9]!] });
  t.same(res.totals, { added: 4, already_member: 5, not_found: 0, deleted: 0, invalid: 0 });
  t.same(await counts(sql, list.id), { stored: 10, real: 10 });
  const removed = await removeMembers(deps, tenant, ACTOR, list.id, { contact_ids: [ids[0]!, ids[0]!, ids[1]!], emails: ['m2@example.test'] });
  t.same(removed.totals, { removed: 3, not_member: 1, not_found: 0, invalid: 0 });
  t.same(await counts(sql, list.id), { stored: 7, real: 7 });
  const again = await removeMembers(deps, tenant, ACTOR, list.id, { contact_ids: [ids[0]!] });
  t.same(again.totals, { removed: 0, not_member: 1, not_found: 0, invalid: 0 });
  t.same(await counts(sql, list.id), { stored: 7, real: 7 }, 'removing a non-member changes nothing');
});

t.test('deleting contacts (one, or a whole tenant by cascade) and lists keeps the counts exact', async (t) => {
  const { sql, deps, tenant } = await setup(t);
  const a = await createList(deps, tenant, ACTOR, { name: 'A' });
  const b = await createList(deps, tenant, ACTOR, { name: 'B' });
  const ids = await insertContacts(sql, tenant, addresses('d', 5));
  await addMembers(deps, tenant, ACTOR, a.id, { contact_ids: ids });
  await addMembers(deps, tenant, ACTOR, b.id, { contact_ids: ids.slice(0, 3) });
  // A contact row deleted outright (as a tenant's cascade does) leaves every list it was in.
  await sql`delete from contacts where id = any(${ids.slice(0, 2)}::uuid[])`;
  t.same(await counts(sql, a.id), { stored: 3, real: 3 });
  t.same(await counts(sql, b.id), { stored: 1, real: 1 });

  await removeList(deps, tenant, ACTOR, b.id);
  t.equal((await sql`select 1 from list_members where list_id = ${b.id}`).length, 0, "the list's members went with it");
  t.equal((await sql`select 1 from contacts where tenant_id = ${tenant}`).length, 3, 'the contacts stayed');
  t.same(await counts(sql, a.id), { stored: 3, real: 3 }, 'the other list is untouched');

  // The tenant's cascade deletes lists, members and contacts in one statement without tripping the triggers.
  const other = await insertTenant(sql);
  const otherList = await createList(deps, other, ACTOR, { name: 'A' });
  await addMembers(deps, other, ACTOR, otherList.id, { contact_ids: await insertContacts(sql, other, addresses('o', 4)) });
  await sql`delete from tenants where id = ${tenant}`;
  t.equal((await sql`select 1 from lists where tenant_id = ${tenant}`).length, 0);
  t.equal((await sql`select 1 from list_members where tenant_id = ${tenant}`).length, 0);
  t.equal((await sql`select 1 from contact_counts where tenant_id = ${tenant}`).length, 0, 'its contact counts went too (migration 024)');
  t.same(await counts(sql, otherList.id), { stored: 4, real: 4 }, "another tenant's list is untouched");
});

t.test('concurrent batches of adds and removes on one list: no deadlock, member_count exact', async (t) => {
  const { sql, deps, tenant } = await setup(t, 10);
  const list = await createList(deps, tenant, ACTOR, { name: 'Busy' });
  const ids = await insertContacts(sql, tenant, addresses('c', 400));
  // Overlapping windows in different orders, adds and removes interleaved, several rounds.
  const window = (from: number, n: number) => ids.slice(from, from + n);
  for (let round = 0; round < 3; round++) {
    const jobs = [
      addMembers(deps, tenant, ACTOR, list.id, { contact_ids: window(0, 250) }),
      addMembers(deps, tenant, ACTOR, list.id, { contact_ids: window(100, 250).reverse() }),
      addMembers(deps, tenant, ACTOR, list.id, { emails: addresses('c', 400).slice(50, 300) }),
      removeMembers(deps, tenant, ACTOR, list.id, { contact_ids: window(150, 200).reverse() }),
      removeMembers(deps, tenant, ACTOR, list.id, { contact_ids: window(0, 120) }),
      addMembers(deps, tenant, ACTOR, list.id, { contact_ids: window(300, 100) }),
      removeMembers(deps, tenant, ACTOR, list.id, { emails: addresses('c', 400).slice(200, 380) }),
    ];
    await Promise.all(jobs);
    const { stored, real } = await counts(sql, list.id);
    t.equal(stored, real, `round ${round}: the counter equals the rows (${real})`);
  }
});

t.test('concurrent batches: the rows each answers "added" and "removed" match the final member_count', async (t) => {
  const { sql, deps, tenant } = await setup(t, 10);
  const list = await createList(deps, tenant, ACTOR, { name: 'Tally' });
  const ids = await insertContacts(sql, tenant, addresses('s', 300));
  const results = await Promise.all([
    addMembers(deps, tenant, ACTOR, list.id, { contact_ids: ids.slice(0, 200) }),
    addMembers(deps, tenant, ACTOR, list.id, { contact_ids: ids.slice(100, 300).reverse() }),
    addMembers(deps, tenant, ACTOR, list.id, { contact_ids: ids }),
    addMembers(deps, tenant, ACTOR, list.id, { emails: addresses('s', 300) }),
  ]);
  const added = results.reduce((n, r) => n + r.totals.added, 0);
  t.equal(added, 300, 'every contact was reported added exactly once across the batches');
  t.same(await counts(sql, list.id), { stored: 300, real: 300 });
  const removals = await Promise.all([
    removeMembers(deps, tenant, ACTOR, list.id, { contact_ids: ids.slice(0, 150) }),
    removeMembers(deps, tenant, ACTOR, list.id, { contact_ids: ids.slice(50, 250).reverse() }),
    removeMembers(deps, tenant, ACTOR, list.id, { emails: addresses('s', 300).slice(0, 100) }),
  ]);
  t.equal(
    removals.reduce((n, r) => n + r.totals.removed, 0),
    250,
    'each removal reported once',
  );
  t.same(await counts(sql, list.id), { stored: 50, real: 50 });
});

t.test('the member-id pager walks every member once in keyset order, also with microsecond added_at ties', async (t) => {
  const { sql, deps, tenant } = await setup(t);
  const list = await createList(deps, tenant, ACTOR, { name: 'Send' });
  const ids = await insertContacts(sql, tenant, addresses('p', 53));
  // One batch: 20 members share one added_at (the contact id breaks the tie).
  await addMembers(deps, tenant, ACTOR, list.id, { contact_ids: ids.slice(0, 20) });
  // Rows written by other code (an import) with now()'s microseconds, several in one statement (equal stamps).
  await sql`
    insert into list_members (list_id, contact_id, tenant_id, added_at)
    select ${list.id}, c, ${tenant}, clock_timestamp() + interval '1 second' + (i % 3) * interval '1 microsecond'
    from unnest(${ids.slice(20, 50)}::uuid[]) with ordinality as x(c, i)`;
  const unsubscribed = ids.slice(50);
  await sql`update contacts set status = 'unsubscribed' where id = any(${unsubscribed}::uuid[])`;
  await addMembers(deps, tenant, ACTOR, list.id, { contact_ids: unsubscribed });
  t.same(await counts(sql, list.id), { stored: 53, real: 53 });

  const expected = (await sql<{ contact_id: string }[]>`select contact_id from list_members where list_id = ${list.id} order by added_at, contact_id`).map(
    (r) => r.contact_id,
  );
  const seen: string[] = [];
  let after: string | undefined;
  for (let i = 0; i < 20; i++) {
    const page = await listMemberIdPage(sql, tenant, list.id, { limit: 7, after });
    seen.push(...page.ids);
    if (page.next === null) break;
    after = page.next;
  }
  t.same(seen, expected, 'each member once, in (added_at, contact_id) order');

  const batches: string[][] = [];
  for await (const batch of eachMemberIdBatch(sql, tenant, list.id, { batchSize: 10, statuses: ['active'] })) batches.push(batch);
  t.same(
    batches.map((b) => b.length),
    [10, 10, 10, 10, 10],
    'active members only, in batches',
  );
  t.same(
    batches.flat(),
    expected.filter((id) => !unsubscribed.includes(id)),
  );

  const exact = await listMemberIdPage(sql, tenant, list.id, { limit: 53 });
  t.equal(exact.ids.length, 53);
  t.not(exact.next, null, 'a full page may be followed by an empty one');
  t.same(await listMemberIdPage(sql, tenant, list.id, { limit: 53, after: exact.next! }), { ids: [], next: null });

  const stranger = await insertTenant(sql);
  t.same(await listMemberIdPage(sql, stranger, list.id, { limit: 10 }), { ids: [], next: null }, "another tenant's list yields nothing");
  t.same(await listMemberIdPage(sql, tenant, 'not-a-uuid', { limit: 10 }), { ids: [], next: null });
  await t.rejects(listMemberIdPage(sql, tenant, list.id, { limit: 10, after: 'bogus' }), { name: 'AppError', slug: 'bad_request' });
});

t.test('a contact deleted while a batch adds it is either refused as deleted or taken out again, never left a member', async (t) => {
  const { sql, deps, tenant } = await setup(t, 6);
  const list = await createList(deps, tenant, ACTOR, { name: 'Race' });
  const [id] = await insertContacts(sql, tenant, ['race@example.test']);
  // What DELETE /contacts/{id} does: status deleted, then out of every list, in one transaction held open here.
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const deletion = sql.begin(async (tx) => {
    await tx`update contacts set status = 'deleted', updated_at = now() where id = ${id!}`;
    await held;
    await tx`delete from list_members where contact_id = ${id!}`;
  });
  const adding = addMembers(deps, tenant, ACTOR, list.id, { contact_ids: [id!] });
  // Bounded wait until the batch is blocked on the contact's row lock.
  for (let i = 0; i < 200; i++) {
    const [row] = await sql<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock' and query like '%insert into list_members%'`;
    if (row!.n > 0) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  release();
  await deletion;
  const result = await adding;
  t.equal(result.results[0]!.status, 'deleted', 'the batch saw the committed deletion');
  t.same(await counts(sql, list.id), { stored: 0, real: 0 });
});
