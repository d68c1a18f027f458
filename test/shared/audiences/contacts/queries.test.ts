// The exported bulk helpers of contacts: upsertContacts (one statement for many rows: insert, merge, skip, make anew) and findContactsByEmails; counts stay
// exact.
import postgres from 'postgres';
import t from 'tap';
import { checkContactWrite } from '../../../../shared/audiences/contacts/input.js';
import { findContactsByEmails, upsertContacts, type ContactRow } from '../../../../shared/audiences/contacts/queries.js';
import { buildTestApp } from '../../../helpers/app.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';

const { sql, db: database } = await buildTestApp(t);

const AT = new Date('2031-02-03T04:05:06.000Z');
const LATER = new Date('2031-02-04T00:00:00.000Z');
const CATALOG = [
  { key: 'plan', type: 'text' as const, options: null, required: false },
  { key: 'seats', type: 'number' as const, options: null, required: false },
];

const write = (input: Record<string, unknown>) => checkContactWrite(CATALOG, input as never, { creating: false, source: 'text' });

/** A connection of its own that counts the statements it runs (postgres.js's debug hook sees each one), opened and warmed up. */
async function counting(): Promise<{ db: postgres.Sql; queries(): number }> {
  let n = 0;
  const db = postgres(database.url, { max: 1, onnotice: () => {}, debug: () => n++ });
  t.teardown(() => db.end({ timeout: 5 }));
  // The first connection also reads the server's array types: not ours to count.
  await db`select 1`;
  const base = n;
  return { db, queries: () => n - base };
}

async function rowOf(tenantId: string, email: string): Promise<ContactRow> {
  const [row] = await sql<ContactRow[]>`select * from contacts where tenant_id = ${tenantId} and email_hash = sha256(convert_to(${email}::text, 'UTF8'))`;
  return row!;
}

async function counts(tenantId: string): Promise<Record<string, number>> {
  const rows = await sql<{ status: string; n: string }[]>`select status, n from contact_counts where tenant_id = ${tenantId} and n <> 0`;
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}

t.test('one statement inserts new addresses and merges into live contacts, in input order', async (t) => {
  const tenant = await insertTenant(sql);
  await upsertContacts(sql, tenant, [write({ email: 'live@example.com', first_name: 'Liv', city: 'Oslo', custom_fields: { plan: 'free', seats: '2' } })], {
    onExisting: 'update',
    at: AT,
  });
  const { db, queries } = await counting();
  const results = await upsertContacts(
    db,
    tenant,
    [
      write({ email: 'new1@example.com', last_name: 'One', status: 'unsubscribed' }),
      write({ email: 'LIVE@example.com', city: null, country: 'NO', custom_fields: { plan: 'pro', seats: '' } }),
      write({ email: 'new2@example.com' }),
    ],
    { onExisting: 'update', at: LATER },
  );
  t.equal(queries(), 1, 'one statement for the batch');
  t.same(
    results.map((r) => [r.email, r.outcome]),
    [
      ['new1@example.com', 'inserted'],
      ['live@example.com', 'updated'],
      ['new2@example.com', 'inserted'],
    ],
  );
  const live = await rowOf(tenant, 'live@example.com');
  t.equal(results[1]!.id, live.id);
  t.match(live, { first_name: 'Liv', city: null, country: 'NO', status: 'active', created_at: AT, updated_at: LATER });
  t.same(live.custom_fields, { plan: 'pro' }, 'set and removed');
  t.match(await rowOf(tenant, 'new1@example.com'), { last_name: 'One', status: 'unsubscribed', unsubscribed_at: LATER });
  t.same(await counts(tenant), { active: 2, unsubscribed: 1 }, 'counts follow');
});

t.test("onExisting 'skip' leaves live contacts as they were; deleted and erased ones are made anew in their row", async (t) => {
  const tenant = await insertTenant(sql);
  const [kept, gone, erased] = await upsertContacts(
    sql,
    tenant,
    [
      write({ email: 'kept@example.com', first_name: 'Kept', status: 'unsubscribed' }),
      write({ email: 'gone@example.com', first_name: 'Gone', custom_fields: { plan: 'x' } }),
      write({ email: 'erased@example.com', first_name: 'Erased' }),
    ],
    { onExisting: 'update', at: AT },
  );
  await sql`update contacts set status = 'deleted' where id = ${gone!.id}`;
  await sql`update contacts set status = 'deleted', email = null, first_name = null, erased_at = ${AT} where id = ${erased!.id}`;

  const results = await upsertContacts(
    sql,
    tenant,
    [
      write({ email: 'kept@example.com', first_name: 'Changed', status: 'active' }),
      write({ email: 'gone@example.com', last_name: 'Back' }),
      write({ email: 'erased@example.com', status: 'unsubscribed' }),
    ],
    { onExisting: 'skip', at: LATER },
  );
  t.same(
    results.map((r) => [r.id, r.outcome]),
    [
      [kept!.id, 'skipped'],
      [gone!.id, 'inserted'],
      [erased!.id, 'inserted'],
    ],
  );
  t.match(await rowOf(tenant, 'kept@example.com'), { first_name: 'Kept', status: 'unsubscribed', updated_at: AT });
  const back = await rowOf(tenant, 'gone@example.com');
  t.match(back, { first_name: null, last_name: 'Back', status: 'active', created_at: LATER }, 'fields replaced, not merged');
  t.same(back.custom_fields, {});
  t.match(await rowOf(tenant, 'erased@example.com'), { email: 'erased@example.com', erased_at: null, status: 'unsubscribed', unsubscribed_at: LATER });
  t.same(await counts(tenant), { unsubscribed: 2, active: 1 });
});

t.test('unsubscribed_at: kept while unsubscribed, never cleared by an upsert; repeats in a batch are refused', async (t) => {
  const tenant = await insertTenant(sql);
  await upsertContacts(sql, tenant, [write({ email: 'u@example.com', status: 'unsubscribed' })], { onExisting: 'update', at: AT });
  await upsertContacts(sql, tenant, [write({ email: 'u@example.com', status: 'unsubscribed' })], { onExisting: 'update', at: LATER });
  t.match(await rowOf(tenant, 'u@example.com'), { unsubscribed_at: AT });
  await upsertContacts(sql, tenant, [write({ email: 'u@example.com', first_name: 'U' })], { onExisting: 'update', at: LATER });
  t.match(await rowOf(tenant, 'u@example.com'), { status: 'unsubscribed', unsubscribed_at: AT }, 'no status given: unchanged');
  await upsertContacts(sql, tenant, [write({ email: 'u@example.com', status: 'active' })], { onExisting: 'update', at: LATER });
  t.match(await rowOf(tenant, 'u@example.com'), { status: 'unsubscribed', unsubscribed_at: AT }, 'an upsert never re-subscribes (markResubscribed does)');
  await upsertContacts(sql, tenant, [write({ email: 'v@example.com', status: 'active' })], { onExisting: 'update', at: AT });
  await upsertContacts(sql, tenant, [write({ email: 'v@example.com', status: 'unsubscribed' })], { onExisting: 'update', at: LATER });
  t.match(await rowOf(tenant, 'v@example.com'), { status: 'unsubscribed', unsubscribed_at: LATER }, 'active to unsubscribed stamps it');
  await t.rejects(
    upsertContacts(sql, tenant, [write({ email: 'a@example.com' }), write({ email: 'A@example.com' })], { onExisting: 'update', at: AT }),
    /distinct/,
  );
  t.same(await upsertContacts(sql, tenant, [], { onExisting: 'update', at: AT }), []);
});

t.test('findContactsByEmails: by hash, erased rows included, scoped to the tenant', async (t) => {
  const [a, b] = [await insertTenant(sql), await insertTenant(sql)];
  const [x, y] = await upsertContacts(sql, a, [write({ email: 'x@example.com' }), write({ email: 'y@example.com' })], { onExisting: 'update', at: AT });
  await upsertContacts(sql, b, [write({ email: 'z@example.com' })], { onExisting: 'update', at: AT });
  await sql`update contacts set status = 'deleted', email = null, erased_at = ${AT} where id = ${y!.id}`;
  const found = await findContactsByEmails(sql, a, ['x@example.com', 'y@example.com', 'z@example.com', 'none@example.com']);
  t.same(
    found.sort((p, q) => p.email.localeCompare(q.email)),
    [
      { id: x!.id, email: 'x@example.com', status: 'active', erased: false },
      { id: y!.id, email: 'y@example.com', status: 'deleted', erased: true },
    ],
  );
  t.same(await findContactsByEmails(sql, a, []), []);
});
