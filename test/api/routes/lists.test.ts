// Lists through the API: CRUD with audit, names, refusals, list pages, scopes and tenant isolation (membership: lists.members.test.ts).
import t from 'tap';
import { call, countRows, createKey, registerTenant } from '../../helpers/app.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';
import { addList, insertContacts, listsApp as app, memberCount, UNKNOWN } from '../../helpers/lists.js';

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
  t.same(
    page.body.data.map((l: { name: string }) => l.name),
    ['Bare', 'Monthly news'],
    'newest first',
  );
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
  t.equal((await call(s.app, 'POST', '/lists', { token: owner.token, body: { name: 'customers' } })).status, 201, "a deleted list's name is free again");
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

t.test("another tenant's lists and contacts are 404 on every id route, and never join a list", async (t) => {
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
  t.same(
    batch.body.data.results.map((r: { status: string }) => r.status),
    ['not_found', 'added', 'not_found'],
  );
  const removal = await call(s.app, 'POST', `/lists/${theirs.id}/members/batch-remove`, { token: other.token, body: { contact_ids: [myContact] } });
  t.same(removal.body.data.totals, { removed: 0, not_member: 0, not_found: 1, invalid: 0 });
  t.same(await memberCount(s.sql, theirs.id), { stored: 1, real: 1 });
  t.equal((await s.sql`select 1 from list_members where contact_id = ${myContact!} and list_id = ${theirs.id}`).length, 0);

  const listed = await call(s.app, 'GET', '/lists', { token: other.token });
  t.same(
    listed.body.data.map((l: { name: string }) => l.name),
    ['Theirs'],
    'only its own lists',
  );
  t.equal(listed.body.total, 1);
  const untouched = await call(s.app, 'GET', `/lists/${mine.id}`, { token: owner.token });
  t.match(untouched.body.data, { name: 'Private', member_count: 1 }, "the owner's list is unchanged");
});
