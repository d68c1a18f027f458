// List membership through the API: one contact at a time, batches with per-row results and the 1,000-entry limit, member pages.
import t from 'tap';
import { call, countRows, registerTenant } from '../../helpers/app.js';
import { addList, addresses, insertContacts, listsApp as app, memberCount, UNKNOWN } from '../../helpers/lists.js';

t.test('one member at a time: PUT is idempotent, GET reads the membership, DELETE removes it', async (t) => {
  const s = await app(t);
  const owner = await registerTenant(s.app);
  const list = await addList(s, owner.token);
  const [ada, gone] = await insertContacts(s.sql, owner.tenantId, ['ada@example.test', 'gone@example.test'], { first: 'Ada' });
  await s.sql`update contacts set status = 'deleted' where id = ${gone!}`;

  const put = await call(s.app, 'PUT', `/lists/${list.id}/members/${ada}`, { token: owner.token });
  t.equal(put.status, 200);
  t.match(put.body.data, {
    id: ada,
    email: 'ada@example.test',
    first_name: 'Ada',
    last_name: 'Doe',
    status: 'active',
    already_member: false,
    added_at: String,
  });
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
  t.same(
    audits.map((a) => [a.action, a.metadata.count]),
    [
      ['list.members_added', 1],
      ['list.members_removed', 1],
    ],
    'only real changes are audited',
  );
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
  const rows = res.body.data.results.map((r: { input: string; field: string; contact_id: string | null; status: string }) => [
    r.field,
    r.input,
    r.contact_id,
    r.status,
  ]);
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
    [
      [a, 'removed'],
      [a, 'not_member'],
      [null, 'invalid'],
      [null, 'not_found'],
      [gone, 'not_member'],
      [b, 'removed'],
      [d, 'removed'],
      [null, 'invalid'],
      [null, 'not_found'],
    ],
  );
  t.same(removed.body.data.totals, { removed: 3, not_member: 2, not_found: 2, invalid: 2 });
  t.same(await memberCount(s.sql, list.id), { stored: 2, real: 2 });

  const audits = await s.sql<{ action: string; metadata: { count: number; contact_ids: string[] } }[]>`
    select action, metadata from audit_events where resource_id = ${list.id} and action like 'list.members%' order by id`;
  t.same(
    audits.map((x) => [x.action, x.metadata.count]),
    [
      ['list.members_added', 1],
      ['list.members_added', 4],
      ['list.members_removed', 3],
    ],
  );
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

  const res = await call(s.app, 'POST', `/lists/${list.id}/members/batch`, {
    token: owner.token,
    body: { contact_ids: ids.slice(0, 500), emails: emails.slice(500, 1000) },
  });
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
  const expected = (
    await s.sql<{ contact_id: string }[]>`
    select contact_id from list_members where list_id = ${list.id} order by added_at, contact_id`
  ).map((r) => r.contact_id);

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
  t.same(
    unsub.body.data.map((m: { id: string }) => m.id),
    expected.filter((id) => ids.slice(5, 12).includes(id)),
  );
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
