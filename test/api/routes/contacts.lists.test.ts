// GET /contacts/{id}/lists: a contact's lists with exact ids and names, their order and pages, refusals, scopes and tenant isolation.
import t from 'tap';
import { call, createKey, registerTenant } from '../../helpers/app.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';
import { addList, insertContacts, listsApp as app, UNKNOWN } from '../../helpers/lists.js';

type Entry = { id: string; name: string; added_at: string };

t.test("a contact's lists: ids, names and added_at exactly, in the order it joined them; none is an empty page", async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const [ada, bob] = await insertContacts(s.sql, owner.tenantId, ['ada@example.test', 'bob@example.test']);
  const news = await addList(s, owner.token, { name: 'Newsletter' });
  const vip = await addList(s, owner.token, { name: 'VIP' });
  await addList(s, owner.token, { name: 'Not hers' });
  // VIP first: the order is the order of joining, not of the lists' creation or names.
  const joinedVip = await call(s.app, 'PUT', `/lists/${vip.id}/members/${ada}`, { token: owner.token });
  await s.sql`update list_members set added_at = added_at - interval '1 hour' where list_id = ${vip.id}`;
  const joinedNews = await call(s.app, 'PUT', `/lists/${news.id}/members/${ada}`, { token: owner.token });

  const res = await call(s.app, 'GET', `/contacts/${ada}/lists`, { token: owner.token });
  t.equal(res.status, 200);
  const vipAdded = new Date(Date.parse(joinedVip.body.data.added_at) - 3_600_000).toISOString();
  t.same(res.body.data, [
    { id: vip.id, name: 'VIP', added_at: vipAdded },
    { id: news.id, name: 'Newsletter', added_at: joinedNews.body.data.added_at },
  ]);
  t.same([res.body.next_cursor, res.body.total], [null, 2]);
  const upper = await call(s.app, 'GET', `/contacts/${ada!.toUpperCase()}/lists`, { token: owner.token });
  t.same(upper.body.data, res.body.data, 'the id in any case');

  const none = await call(s.app, 'GET', `/contacts/${bob}/lists`, { token: owner.token });
  t.same([none.status, none.body.data, none.body.next_cursor, none.body.total], [200, [], null, 0], 'a contact in no list');

  // A renamed list shows its new name; a deleted list and a removal leave the answer.
  await call(s.app, 'PATCH', `/lists/${news.id}`, { token: owner.token, body: { name: 'Weekly' } });
  t.same(
    (await call(s.app, 'GET', `/contacts/${ada}/lists`, { token: owner.token })).body.data.map((l: Entry) => l.name),
    ['VIP', 'Weekly'],
  );
  await call(s.app, 'DELETE', `/lists/${vip.id}`, { token: owner.token });
  const after = await call(s.app, 'GET', `/contacts/${ada}/lists`, { token: owner.token });
  t.same([after.body.data.map((l: Entry) => l.id), after.body.total], [[news.id], 1]);
  await call(s.app, 'DELETE', `/lists/${news.id}/members/${ada}`, { token: owner.token });
  t.same((await call(s.app, 'GET', `/contacts/${ada}/lists`, { token: owner.token })).body.total, 0);
});

t.test('pages: keyset on added_at to the microsecond, ties broken by list id; a foreign cursor is 400', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const [ada] = await insertContacts(s.sql, owner.tenantId, ['ada@example.test']);
  const lists = [];
  for (const name of ['L0', 'L1', 'L2', 'L3', 'L4']) lists.push(await addList(s, owner.token, { name }));
  const ids = lists.map((l) => l.id as string);
  for (const id of ids) await call(s.app, 'PUT', `/lists/${id}/members/${ada}`, { token: owner.token });
  // Each page boundary (limit 2) falls inside a pair: two a microsecond apart (the same millisecond as a Date), then
  // two at the very same instant, so a cursor rounded to milliseconds or without the list id would skip or repeat.
  const at = ['2026-01-01T00:00:00Z', '2026-01-01T00:00:01.000001Z', '2026-01-01T00:00:01.000002Z', '2026-01-01T00:00:02Z', '2026-01-01T00:00:02Z'];
  // Bound as text: a timestamptz parameter would go through a Date, which keeps milliseconds only.
  for (const [i, id] of ids.entries()) await s.sql`update list_members set added_at = ${at[i]!}::text::timestamptz where list_id = ${id}`;
  const tied = [ids[3]!, ids[4]!].sort();
  const expected = [ids[0], ids[1], ids[2], ...tied];

  const seen: string[] = [];
  let after: string | null = null;
  for (let page = 0; page < 5; page++) {
    const query: string = after ? `&after=${after}` : '';
    const res = await call(s.app, 'GET', `/contacts/${ada}/lists?limit=2${query}`, { token: owner.token });
    t.equal(res.status, 200);
    t.equal(res.body.total, 5, `page ${page}: total is every list`);
    t.equal(res.body.data.length, page < 2 ? 2 : 1, `page ${page} size`);
    seen.push(...res.body.data.map((l: Entry) => l.id));
    after = res.body.next_cursor;
    if (after === null) break;
  }
  t.same(seen, expected, 'each list once, in keyset order');
  t.equal(after, null, 'the last page has no next_cursor');

  for (const bad of ['garbage', Buffer.from('12|nope').toString('base64url')]) {
    const res = await call(s.app, 'GET', `/contacts/${ada}/lists?after=${bad}`, { token: owner.token });
    t.same([res.status, res.body.error], [400, 'bad_request'], `after=${bad}`);
  }
  t.equal((await call(s.app, 'GET', `/contacts/${ada}/lists?limit=0`, { token: owner.token })).status, 422, 'limit 0');
});

t.test('unknown and malformed contact ids are 404 as on GET /contacts/{id}; another tenant sees 404', async (t) => {
  const s = await app(t);
  const { owner, other } = await twoTenants(s.app);
  const [mine] = await insertContacts(s.sql, owner.tenantId, ['mine@example.test']);
  const list = await addList(s, owner.token, { name: 'Private' });
  await call(s.app, 'PUT', `/lists/${list.id}/members/${mine}`, { token: owner.token });

  for (const id of [UNKNOWN, 'not-a-uuid']) {
    const res = await call(s.app, 'GET', `/contacts/${id}/lists`, { token: owner.token });
    const read = await call(s.app, 'GET', `/contacts/${id}`, { token: owner.token });
    t.same([res.status, res.body.error, res.body.message], [404, 'not_found', 'contact not found'], `GET /contacts/${id}/lists`);
    t.same([read.status, read.body.error, read.body.message], [res.status, res.body.error, res.body.message], 'the same answer as reading it');
  }
  const otherKey = await createKey(s.app, other);
  for (const credential of [other.token, otherKey.key]) await assertForeign404(t, s.app, credential, [{ method: 'GET', url: `/contacts/${mine}/lists` }]);
  t.equal((await call(s.app, 'GET', `/contacts/${mine}/lists`)).status, 401, 'no credential');
});

t.test('scopes: contacts:read and lists:read together; either alone is 403 invalid_scope', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const [ada] = await insertContacts(s.sql, owner.tenantId, ['ada@example.test']);
  const list = await addList(s, owner.token, { name: 'Newsletter' });
  await call(s.app, 'PUT', `/lists/${list.id}/members/${ada}`, { token: owner.token });
  const url = `/contacts/${ada}/lists`;
  for (const scopes of [['contacts:read'], ['lists:read'], ['contacts:write', 'lists:write']]) {
    const key = await createKey(s.app, owner, { scopes });
    const res = await call(s.app, 'GET', url, { token: key.key });
    t.same([res.status, res.body.error], [403, 'invalid_scope'], `a key with ${scopes.join(', ')} is refused`);
  }
  const both = await createKey(s.app, owner, { scopes: ['contacts:read', 'lists:read'] });
  const res = await call(s.app, 'GET', url, { token: both.key });
  t.same([res.status, res.body.data.map((l: Entry) => l.name)], [200, ['Newsletter']]);
});
