// Lists through the API: CRUD with audit, names, refusals, membership one at a time and in batches (per-row results, the 1,000 limit), member pages, scopes and tenant isolation.
import t from 'tap';
import type { Sql } from '../../shared/db/connection.js';
import { buildTestApp, call, countRows, createKey, registerTenant, type TestApp, type TestLike } from '../helpers/app.js';
import { assertForeign404, twoTenants } from '../helpers/isolation.js';

const BULK_ENV = { MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__BULK: '100000' };
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

async function app(t: TestLike): Promise<TestApp> {
  return buildTestApp(t, { env: BULK_ENV });
}

async function addList(s: TestApp, token: string, body: Record<string, unknown> = { name: 'Newsletter' }) {
  const res = await call(s.app, 'POST', '/lists', { token, body });
  if (res.status !== 201) throw new Error(`create list: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** Contacts inserted directly (the contacts API is another branch's); returns their ids in the order of the addresses. */
async function insertContacts(sql: Sql, tenantId: string, emails: string[], extra: { status?: string; first?: string } = {}): Promise<string[]> {
  const rows = await sql<{ id: string; email: string }[]>`
    insert into contacts (tenant_id, email, first_name, last_name, status, created_at, updated_at)
    select ${tenantId}, e, ${extra.first ?? null}, 'Doe', ${extra.status ?? 'active'}, now(), now() from unnest(${emails}::text[]) as e
    returning id, email`;
  const byEmail = new Map(rows.map((r) => [r.email, r.id]));
  return emails.map((e) => byEmail.get(e)!);
}

const addresses = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}@example.test`);

async function memberCount(sql: Sql, listId: string): Promise<{ stored: number; real: number }> {
  const [row] = await sql<{ stored: number; real: number }[]>`
    select (select member_count::int from lists where id = ${listId}) as stored,
           (select count(*)::int from list_members where list_id = ${listId}) as real`;
  return row!;
}

t.test('create, read, list, rename and describe, delete; every change audited', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const created = await call(s.app, 'POST', '/lists', { token: owner.token, body: { name: '  Weekly news  ', description: ' Everyone who asked ' } });
  t.equal(created.status, 201);
  const list = created.body.data;
  t.match(list, { id: String, name: 'Weekly news', description: 'Everyone who asked', member_count: 0, created_at: String });
  t.equal(list.updated_at, list.created_at);
  t.same((await call(s.app, 'GET', `/lists/${list.id}`, { token: owner.token })).body.data, list, 'read back as created');
  const bare = await addList(s, owner.token, { name: 'Bare' });
  t.equal(bare.description, null, 'no description');

  let res = await call(s.app, 'PATCH', `/lists/${list.id}`, { token: owner.token, body: { name: 'Monthly news' } });
  t.equal(res.status, 200);
  t.match(res.body.data, { name: 'Monthly news', description: 'Everyone who asked' });
  res = await call(s.app, 'PATCH', `/lists/${list.id}`, { token: owner.token, body: { description: null } });
  t.match(res.body.data, { name: 'Monthly news', description: null }, 'null removes the description');
  res = await call(s.app, 'PATCH', `/lists/${list.id}`, { token: owner.token, body: { description: 'Back' } });
  t.equal(res.body.data.description, 'Back');
  res = await call(s.app, 'PATCH', `/lists/${list.id}`, { token: owner.token, body: { description: '  ' } });
  t.equal(res.body.data.description, null, 'a blank description removes it');
  res = await call(s.app, 'PATCH', `/lists/${list.id}`, { token: owner.token, body: {} });
  t.equal(res.status, 200, 'an empty PATCH changes nothing');
  t.equal(res.body.data.name, 'Monthly news');

  const page = await call(s.app, 'GET', '/lists', { token: owner.token });
  t.equal(page.status, 200);
  t.same(page.body.data.map((l: { name: string }) => l.name), ['Bare', 'Monthly news'], 'newest first');
  t.equal(page.body.total, 2);
  t.equal(page.body.next_cursor, null);

  const del = await call(s.app, 'DELETE', `/lists/${list.id}`, { token: owner.token });
  t.same([del.status, del.body.data], [200, { deleted: true, id: list.id }]);
  t.equal((await call(s.app, 'GET', `/lists/${list.id}`, { token: owner.token })).status, 404);
  t.equal((await call(s.app, 'DELETE', `/lists/${list.id}`, { token: owner.token })).status, 404, 'deleting twice');
  const audits = await s.sql<{ action: string; metadata: Record<string, unknown> }[]>`
    select action, metadata from audit_events where resource_type = 'list' and resource_id = ${list.id} order by id`;
  t.same(
    audits.map((a) => [a.action, a.metadata]),
    [
      ['list.created', { name: 'Weekly news' }],
      ['list.updated', { name: 'Monthly news', fields: ['name'] }],
      ['list.updated', { name: 'Monthly news', fields: ['description'] }],
      ['list.updated', { name: 'Monthly news', fields: ['description'] }],
      ['list.updated', { name: 'Monthly news', fields: ['description'] }],
      ['list.deleted', { name: 'Monthly news', member_count: 0 }],
    ],
    'one audit row per change, none for the empty PATCH',
  );
});

t.test('refusals: duplicate names 409, bad input 422 or 400, unknown ids 404; nothing written', async (t) => {
  const s = await app(t);
  const { owner, other } = await twoTenants(s.app);
  const first = await addList(s, owner.token, { name: 'Customers' });
  for (const name of ['Customers', 'CUSTOMERS', ' customers ']) {
    const res = await call(s.app, 'POST', '/lists', { token: owner.token, body: { name } });
    t.same([res.status, res.body.error], [409, 'conflict'], `${JSON.stringify(name)} → 409`);
  }
  const second = await addList(s, owner.token, { name: 'Leads' });
  t.equal((await call(s.app, 'PATCH', `/lists/${second.id}`, { token: owner.token, body: { name: 'customers' } })).status, 409, 'renaming onto another list');
  t.equal((await call(s.app, 'PATCH', `/lists/${first.id}`, { token: owner.token, body: { name: 'CUSTOMERS' } })).status, 200, 'recasing its own name');
  t.equal((await call(s.app, 'POST', '/lists', { token: other.token, body: { name: 'Customers' } })).status, 201, 'another tenant may use the name');

  const bad: [unknown, number, RegExp][] = [
    [{}, 422, /^name/],
    [{ name: '   ' }, 422, /^name: must not be blank/],
    [{ name: 'x'.repeat(201) }, 422, /^name: must be at most 200 characters/],
    [{ name: `  ${'x'.repeat(200)}  ` }, 201, /./],
    [{ name: 'Two\nlines' }, 422, /^name: must not contain line breaks/],
    [{ name: 'Tab\tinside' }, 422, /^name: must not contain/],
    [{ name: 42 }, 422, /^name/],
    [{ name: 'Ok', description: 'd'.repeat(1001) }, 422, /^description: must be at most 1000/],
    [{ name: 'Ok', colour: 'red' }, 400, /unexpected field/],
  ];
  for (const [body, status, message] of bad) {
    const res = await call(s.app, 'POST', '/lists', { token: owner.token, body });
    t.equal(res.status, status, `${JSON.stringify(body).slice(0, 60)} → ${status}`);
    if (status !== 201) t.match(res.body.message, message);
  }
  for (const body of [{ name: '' }, { name: 'a\u0000b' }, { description: 'd'.repeat(1001) }, { member_count: 5 }]) {
    const res = await call(s.app, 'PATCH', `/lists/${first.id}`, { token: owner.token, body });
    t.ok([400, 422].includes(res.status), `PATCH ${JSON.stringify(body).slice(0, 40)} refused (${res.status})`);
  }
  t.equal((await call(s.app, 'GET', `/lists/${first.id}`, { token: owner.token })).body.data.name, 'CUSTOMERS', 'refused updates changed nothing');
  t.equal(await countRows(s.sql, 'lists', owner.tenantId), 3);

  for (const id of [UNKNOWN, 'not-a-uuid']) {
    for (const [method, body] of [['GET'], ['PATCH', { name: 'X' }], ['DELETE']] as const) {
      const res = await call(s.app, method, `/lists/${id}`, { token: owner.token, ...(body ? { body } : {}) });
      t.same([res.status, res.body.error], [404, 'not_found'], `${method} /lists/${id}`);
    }
  }
  await call(s.app, 'DELETE', `/lists/${first.id}`, { token: owner.token });
  t.equal((await call(s.app, 'POST', '/lists', { token: owner.token, body: { name: 'customers' } })).status, 201, 'a deleted list\'s name is free again');
});

t.test('one member at a time: PUT is idempotent, GET reads the membership, DELETE removes it', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const list = await addList(s, owner.token);
  const [ada, gone] = await insertContacts(s.sql, owner.tenantId, ['ada@example.test', 'gone@example.test'], { first: 'Ada' });
  await s.sql`update contacts set status = 'deleted' where id = ${gone!}`;

  const put = await call(s.app, 'PUT', `/lists/${list.id}/members/${ada}`, { token: owner.token });
  t.equal(put.status, 200);
  t.match(put.body.data, { id: ada, email: 'ada@example.test', first_name: 'Ada', last_name: 'Doe', status: 'active', already_member: false, added_at: String });
  const again = await call(s.app, 'PUT', `/lists/${list.id}/members/${ada!.toUpperCase()}`, { token: owner.token });
  t.equal(again.status, 200);
  t.equal(again.body.data.already_member, true, 'a second PUT (id in any case) changes nothing');
  t.equal(again.body.data.added_at, put.body.data.added_at, 'added_at is kept');
  t.equal((await call(s.app, 'GET', `/lists/${list.id}`, { token: owner.token })).body.data.member_count, 1);
  const read = await call(s.app, 'GET', `/lists/${list.id}/members/${ada}`, { token: owner.token });
  t.same(read.body.data, { id: ada, email: 'ada@example.test', first_name: 'Ada', last_name: 'Doe', status: 'active', added_at: put.body.data.added_at });

  for (const contact of [UNKNOWN, 'not-a-uuid']) {
    const res = await call(s.app, 'PUT', `/lists/${list.id}/members/${contact}`, { token: owner.token });
    t.same([res.status, res.body.error, res.body.message], [404, 'not_found', 'contact not found'], `PUT unknown contact ${contact}`);
  }
  const deleted = await call(s.app, 'PUT', `/lists/${list.id}/members/${gone}`, { token: owner.token });
  t.same([deleted.status, deleted.body.error], [409, 'conflict'], 'a deleted contact is refused');
  t.match(deleted.body.message, /deleted/);
  t.equal((await call(s.app, 'PUT', `/lists/${UNKNOWN}/members/${ada}`, { token: owner.token })).status, 404, 'unknown list');
  t.equal((await call(s.app, 'PUT', `/lists/${list.id}/members/${ada}`, { token: owner.token, body: { x: 1 } })).status, 400, 'PUT takes no body');

  const del = await call(s.app, 'DELETE', `/lists/${list.id}/members/${ada}`, { token: owner.token });
  t.same([del.status, del.body.data], [200, { removed: true, list_id: list.id, contact_id: ada }]);
  const twice = await call(s.app, 'DELETE', `/lists/${list.id}/members/${ada}`, { token: owner.token });
  t.same([twice.status, twice.body.error], [404, 'not_found'], 'removing a non-member');
  t.match(twice.body.message, /not in this list/);
  t.equal((await call(s.app, 'DELETE', `/lists/${list.id}/members/${UNKNOWN}`, { token: owner.token })).status, 404, 'unknown contact');
  t.equal((await call(s.app, 'GET', `/lists/${list.id}/members/${ada}`, { token: owner.token })).status, 404, 'no longer a member');
  t.same(await memberCount(s.sql, list.id), { stored: 0, real: 0 });
  t.equal(await countRows(s.sql, 'contacts', owner.tenantId), 2, 'contacts stay');
  const audits = await s.sql<{ action: string; metadata: { count: number } }[]>`
    select action, metadata from audit_events where resource_type = 'list' and resource_id = ${list.id} and action like 'list.members%' order by id`;
  t.same(audits.map((a) => [a.action, a.metadata.count]), [['list.members_added', 1], ['list.members_removed', 1]], 'only real changes are audited');
});

t.test('batches: one result per entry for every status, repeats within a batch, totals', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const list = await addList(s, owner.token);
  const [a, b, c, d] = await insertContacts(s.sql, owner.tenantId, addresses('b', 4));
  const [gone] = await insertContacts(s.sql, owner.tenantId, ['gone@example.test'], { status: 'deleted' });
  const [unsub] = await insertContacts(s.sql, owner.tenantId, ['unsub@example.test'], { status: 'unsubscribed' });
  await call(s.app, 'PUT', `/lists/${list.id}/members/${a}`, { token: owner.token });

  const res = await call(s.app, 'POST', `/lists/${list.id}/members/batch`, {
    token: owner.token,
    body: {
      contact_ids: [a, b, b, ` ${c!.toUpperCase()} `, UNKNOWN, 'nope', gone, unsub],
      emails: ['  B2@Example.TEST ', 'b3@example.test', 'nobody@example.test', 'not an address', 'b1@example.test', 'gone@example.test'],
    },
  });
  t.equal(res.status, 200);
  const rows = res.body.data.results.map((r: { input: string; field: string; contact_id: string | null; status: string }) => [r.field, r.input, r.contact_id, r.status]);
  t.same(rows, [
    ['contact_ids', a, a, 'already_member'],
    ['contact_ids', b, b, 'added'],
    ['contact_ids', b, b, 'already_member'],
    ['contact_ids', ` ${c!.toUpperCase()} `, c, 'added'],
    ['contact_ids', UNKNOWN, null, 'not_found'],
    ['contact_ids', 'nope', null, 'invalid'],
    ['contact_ids', gone, gone, 'deleted'],
    ['contact_ids', unsub, unsub, 'added'],
    ['emails', '  B2@Example.TEST ', c, 'already_member'],
    ['emails', 'b3@example.test', d, 'added'],
    ['emails', 'nobody@example.test', null, 'not_found'],
    ['emails', 'not an address', null, 'invalid'],
    ['emails', 'b1@example.test', b, 'already_member'],
    ['emails', 'gone@example.test', gone, 'deleted'],
  ]);
  t.same(res.body.data.totals, { added: 4, already_member: 4, not_found: 2, deleted: 2, invalid: 2 });
  const messages = res.body.data.results.map((r: { message: string | null }) => r.message);
  t.equal(messages[1], null, 'no message for an added entry');
  t.match(messages[11], /^emails\.3: /, 'an invalid address says why, naming its index');
  t.match(messages[10], /no contact of this account has this address/);
  t.same(await memberCount(s.sql, list.id), { stored: 5, real: 5 });
  t.equal(await countRows(s.sql, 'contacts', owner.tenantId), 6, 'unknown addresses do not create contacts');

  const removed = await call(s.app, 'POST', `/lists/${list.id}/members/batch-remove`, {
    token: owner.token,
    body: { contact_ids: [a, a, 'nope', UNKNOWN, gone], emails: ['B1@example.test', 'b3@example.test', 'bad', 'nobody@example.test'] },
  });
  t.equal(removed.status, 200);
  t.same(
    removed.body.data.results.map((r: { contact_id: string | null; status: string }) => [r.contact_id, r.status]),
    [[a, 'removed'], [a, 'not_member'], [null, 'invalid'], [null, 'not_found'], [gone, 'not_member'], [b, 'removed'], [d, 'removed'], [null, 'invalid'], [null, 'not_found']],
  );
  t.same(removed.body.data.totals, { removed: 3, not_member: 2, not_found: 2, invalid: 2 });
  t.same(await memberCount(s.sql, list.id), { stored: 2, real: 2 });

  const audits = await s.sql<{ action: string; metadata: { count: number; contact_ids: string[] } }[]>`
    select action, metadata from audit_events where resource_id = ${list.id} and action like 'list.members%' order by id`;
  t.same(audits.map((x) => [x.action, x.metadata.count]), [['list.members_added', 1], ['list.members_added', 4], ['list.members_removed', 3]]);
  t.same(audits[1]!.metadata.contact_ids, [b, c, d, unsub].sort(), 'the audit names the contacts added');

  for (const body of [{}, { contact_ids: [] }, { contact_ids: [], emails: [] }]) {
    const r = await call(s.app, 'POST', `/lists/${list.id}/members/batch`, { token: owner.token, body });
    t.same([r.status, r.body.error], [422, 'validation_error'], `empty batch ${JSON.stringify(body)}`);
  }
  t.equal((await call(s.app, 'POST', `/lists/${list.id}/members/batch`, { token: owner.token, body: { ids: [a] } })).status, 400, 'unknown field');
  t.equal((await call(s.app, 'POST', `/lists/${list.id}/members/batch`, { token: owner.token, body: { contact_ids: a } })).status, 422, 'not an array');
  t.equal((await call(s.app, 'POST', `/lists/${UNKNOWN}/members/batch`, { token: owner.token, body: { contact_ids: [a] } })).status, 404, 'unknown list');
  t.equal((await call(s.app, 'POST', `/lists/${UNKNOWN}/members/batch-remove`, { token: owner.token, body: { contact_ids: [a] } })).status, 404);
});

t.test('a batch holds at most 1,000 entries: 1,000 are added in one call, 1,001 are 422 and change nothing', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const list = await addList(s, owner.token);
  const emails = addresses('k', 1001);
  const ids = await insertContacts(s.sql, owner.tenantId, emails);
  const cases: [string, Record<string, string[]>][] = [
    ['1,001 ids', { contact_ids: ids }],
    ['1,001 addresses', { emails }],
    ['600 ids and 401 addresses', { contact_ids: ids.slice(0, 600), emails: emails.slice(600) }],
  ];
  for (const [label, body] of cases) {
    for (const url of [`/lists/${list.id}/members/batch`, `/lists/${list.id}/members/batch-remove`]) {
      const res = await call(s.app, 'POST', url, { token: owner.token, body });
      t.same([res.status, res.body.error], [422, 'validation_error'], `${label} → 422 (${url.split('/').pop()})`);
      t.match(res.body.message, /^(contact_ids|emails)\b/);
    }
  }
  t.same(await memberCount(s.sql, list.id), { stored: 0, real: 0 }, 'nothing was added');

  const res = await call(s.app, 'POST', `/lists/${list.id}/members/batch`, { token: owner.token, body: { contact_ids: ids.slice(0, 500), emails: emails.slice(500, 1000) } });
  t.equal(res.status, 200);
  t.equal(res.body.data.results.length, 1000);
  t.equal(res.body.data.totals.added, 1000, '1,000 entries in one call');
  t.same(await memberCount(s.sql, list.id), { stored: 1000, real: 1000 });
  const removed = await call(s.app, 'POST', `/lists/${list.id}/members/batch-remove`, { token: owner.token, body: { emails: emails.slice(0, 1000) } });
  t.equal(removed.body.data.totals.removed, 1000);
  t.same(await memberCount(s.sql, list.id), { stored: 0, real: 0 });
});

t.test('member pages: every member exactly once in the order added, status filter, totals, cursors', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const list = await addList(s, owner.token);
  const ids = await insertContacts(s.sql, owner.tenantId, addresses('p', 45));
  // Three batches (members of one batch share added_at: the contact id orders them).
  for (const part of [ids.slice(0, 20), ids.slice(20, 35), ids.slice(35, 40)]) {
    await call(s.app, 'POST', `/lists/${list.id}/members/batch`, { token: owner.token, body: { contact_ids: part } });
  }
  await s.sql`update contacts set status = 'unsubscribed' where id = any(${ids.slice(5, 12)}::uuid[])`;
  const expected = (await s.sql<{ contact_id: string }[]>`
    select contact_id from list_members where list_id = ${list.id} order by added_at, contact_id`).map((r) => r.contact_id);

  const seen: string[] = [];
  let url = `/lists/${list.id}/members?limit=7`;
  let pages = 0;
  for (; pages < 20; pages++) {
    const page = await call(s.app, 'GET', url, { token: owner.token });
    t.equal(page.status, 200);
    t.equal(page.body.total, pages < 2 ? 40 : 45, 'total is the member_count');
    seen.push(...page.body.data.map((m: { id: string }) => m.id));
    if (pages === 1) {
      // A member added mid-walk shows up at the end.
      await call(s.app, 'POST', `/lists/${list.id}/members/batch`, { token: owner.token, body: { contact_ids: ids.slice(40) } });
      expected.push(...ids.slice(40).sort());
    }
    if (page.body.next_cursor === null) break;
    url = `/lists/${list.id}/members?limit=7&after=${page.body.next_cursor}`;
  }
  t.same(seen, expected, 'each member once, in (added_at, contact_id) order, late additions last');
  t.equal(new Set(seen).size, 45);
  t.ok(pages < 20, 'the walk ended');

  const first = (await call(s.app, 'GET', `/lists/${list.id}/members?limit=1`, { token: owner.token })).body.data[0];
  t.same(Object.keys(first).sort(), ['added_at', 'email', 'first_name', 'id', 'last_name', 'status']);

  const unsub = await call(s.app, 'GET', `/lists/${list.id}/members?status=unsubscribed&limit=200`, { token: owner.token });
  t.same(unsub.body.data.map((m: { id: string }) => m.id), expected.filter((id) => ids.slice(5, 12).includes(id)));
  t.equal(unsub.body.total, 7, 'total counts the status');
  t.ok(unsub.body.data.every((m: { status: string }) => m.status === 'unsubscribed'));
  const active = await call(s.app, 'GET', `/lists/${list.id}/members?status=active&limit=200`, { token: owner.token });
  t.equal(active.body.total, 38);

  for (const bad of ['bogus', 'YWJj', Buffer.from(`123|${UNKNOWN}|x`).toString('base64url'), Buffer.from(`1.5|${UNKNOWN}`).toString('base64url')]) {
    const res = await call(s.app, 'GET', `/lists/${list.id}/members?after=${bad}`, { token: owner.token });
    t.same([res.status, res.body.error], [400, 'bad_request'], `cursor ${bad}`);
  }
  for (const q of ['limit=0', 'limit=201', 'status=gone']) {
    t.equal((await call(s.app, 'GET', `/lists/${list.id}/members?${q}`, { token: owner.token })).status, 422, q);
  }
  t.equal((await call(s.app, 'GET', `/lists/${UNKNOWN}/members`, { token: owner.token })).status, 404);

  // Deleting the list takes its members with it; the contacts stay.
  await call(s.app, 'DELETE', `/lists/${list.id}`, { token: owner.token });
  t.equal(await countRows(s.sql, 'list_members', owner.tenantId), 0);
  t.equal(await countRows(s.sql, 'contacts', owner.tenantId), 45);
});

t.test('list pages: newest first, cursor walk, limit bounds', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const names: string[] = [];
  for (let i = 0; i < 12; i++) names.push((await addList(s, owner.token, { name: `List ${i}` })).name);
  const seen: string[] = [];
  let url = '/lists?limit=5';
  for (let i = 0; i < 10; i++) {
    const page = await call(s.app, 'GET', url, { token: owner.token });
    t.equal(page.body.total, 12);
    seen.push(...page.body.data.map((l: { name: string }) => l.name));
    if (page.body.next_cursor === null) break;
    url = `/lists?limit=5&after=${page.body.next_cursor}`;
  }
  t.same(seen, names.reverse());
  t.equal((await call(s.app, 'GET', '/lists?limit=201', { token: owner.token })).status, 422);
  t.equal((await call(s.app, 'GET', '/lists?after=bogus', { token: owner.token })).status, 400);
});

t.test('scopes: lists:read reads, lists:write changes', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const list = await addList(s, owner.token);
  const [id] = await insertContacts(s.sql, owner.tenantId, ['scoped@example.test']);
  await call(s.app, 'PUT', `/lists/${list.id}/members/${id}`, { token: owner.token });
  const reader = await createKey(s.app, owner, { scopes: ['lists:read'] });
  const writer = await createKey(s.app, owner, { scopes: ['lists:write'] });
  const contacts = await createKey(s.app, owner, { scopes: ['contacts:read', 'contacts:write'] });
  const reads = ['/lists', `/lists/${list.id}`, `/lists/${list.id}/members`, `/lists/${list.id}/members/${id}`];
  for (const url of reads) t.equal((await call(s.app, 'GET', url, { token: reader.key })).status, 200, `GET ${url} with lists:read`);
  const writes = [
    { method: 'POST' as const, url: '/lists', body: { name: 'Other' } },
    { method: 'PATCH' as const, url: `/lists/${list.id}`, body: { name: 'Renamed' } },
    { method: 'PUT' as const, url: `/lists/${list.id}/members/${id}` },
    { method: 'DELETE' as const, url: `/lists/${list.id}/members/${id}` },
    { method: 'POST' as const, url: `/lists/${list.id}/members/batch`, body: { contact_ids: [id] } },
    { method: 'POST' as const, url: `/lists/${list.id}/members/batch-remove`, body: { contact_ids: [id] } },
    { method: 'DELETE' as const, url: `/lists/${list.id}` },
  ];
  for (const key of [reader.key, contacts.key]) {
    for (const w of writes) {
      const res = await call(s.app, w.method, w.url, { token: key, ...(w.body ? { body: w.body } : {}) });
      t.same([res.status, res.body.error], [403, 'invalid_scope'], `${w.method} ${w.url} needs lists:write`);
    }
  }
  for (const url of reads) {
    const res = await call(s.app, 'GET', url, { token: writer.key });
    t.same([res.status, res.body.error], [403, 'invalid_scope'], `GET ${url}: write does not imply read`);
  }
  t.same(await memberCount(s.sql, list.id), { stored: 1, real: 1 }, 'the refused calls changed nothing');
  t.equal((await call(s.app, 'GET', `/lists/${list.id}`, { token: owner.token })).body.data.name, 'Newsletter');
  for (const w of writes) {
    const res = await call(s.app, w.method, w.url, { token: writer.key, ...(w.body ? { body: w.body } : {}) });
    t.ok(res.status === 200 || res.status === 201, `${w.method} ${w.url} with lists:write (${res.status})`);
  }
  t.equal((await call(s.app, 'GET', '/lists')).status, 401);
});

t.test('another tenant\'s lists and contacts are 404 on every id route, and never join a list', async (t) => {
  const s = await app(t);
  const { owner, other } = await twoTenants(s.app);
  const mine = await addList(s, owner.token, { name: 'Private' });
  const [myContact] = await insertContacts(s.sql, owner.tenantId, ['mine@example.test']);
  await call(s.app, 'PUT', `/lists/${mine.id}/members/${myContact}`, { token: owner.token });
  const theirs = await addList(s, other.token, { name: 'Theirs' });
  const [theirContact] = await insertContacts(s.sql, other.tenantId, ['theirs@example.test']);
  const otherKey = await createKey(s.app, other);

  const routes = [
    { method: 'GET' as const, url: `/lists/${mine.id}` },
    { method: 'PATCH' as const, url: `/lists/${mine.id}`, body: { name: 'Mine now' } },
    { method: 'DELETE' as const, url: `/lists/${mine.id}` },
    { method: 'GET' as const, url: `/lists/${mine.id}/members` },
    { method: 'GET' as const, url: `/lists/${mine.id}/members/${myContact}` },
    { method: 'PUT' as const, url: `/lists/${mine.id}/members/${theirContact}` },
    { method: 'DELETE' as const, url: `/lists/${mine.id}/members/${myContact}` },
    { method: 'POST' as const, url: `/lists/${mine.id}/members/batch`, body: { contact_ids: [theirContact] } },
    { method: 'POST' as const, url: `/lists/${mine.id}/members/batch-remove`, body: { contact_ids: [myContact] } },
    // The other tenant's own list with the owner's contact: the contact is unknown to it.
    { method: 'PUT' as const, url: `/lists/${theirs.id}/members/${myContact}` },
    { method: 'GET' as const, url: `/lists/${theirs.id}/members/${myContact}` },
    { method: 'DELETE' as const, url: `/lists/${theirs.id}/members/${myContact}` },
  ];
  for (const credential of [other.token, otherKey.key]) await assertForeign404(t, s.app, credential, routes);

  // In a batch, another tenant's contact (by id or address) is not_found and never added.
  const batch = await call(s.app, 'POST', `/lists/${theirs.id}/members/batch`, {
    token: other.token,
    body: { contact_ids: [myContact, theirContact], emails: ['mine@example.test'] },
  });
  t.same(batch.body.data.results.map((r: { status: string }) => r.status), ['not_found', 'added', 'not_found']);
  const removal = await call(s.app, 'POST', `/lists/${theirs.id}/members/batch-remove`, { token: other.token, body: { contact_ids: [myContact] } });
  t.same(removal.body.data.totals, { removed: 0, not_member: 0, not_found: 1, invalid: 0 });
  t.same(await memberCount(s.sql, theirs.id), { stored: 1, real: 1 });
  t.equal((await s.sql`select 1 from list_members where contact_id = ${myContact!} and list_id = ${theirs.id}`).length, 0);

  const listed = await call(s.app, 'GET', '/lists', { token: other.token });
  t.same(listed.body.data.map((l: { name: string }) => l.name), ['Theirs'], 'only its own lists');
  t.equal(listed.body.total, 1);
  const untouched = await call(s.app, 'GET', `/lists/${mine.id}`, { token: owner.token });
  t.match(untouched.body.data, { name: 'Private', member_count: 1 }, 'the owner\'s list is unchanged');
});
