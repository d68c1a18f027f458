// MD5 suppression lists: create, read, list, delete, hash uploads (valid, upper-case, duplicate, invalid lines), the send's look-up, isolation and scopes.
import { createHash } from 'node:crypto';
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { isListed } from '../../../shared/audiences/md5-lists/service.js';

const md5 = (text: string) => createHash('md5').update(text).digest('hex');

async function uploadHashes(app: Parameters<typeof call>[0], token: string, id: string, body: string, type = 'text/plain') {
  const res = await app.inject({
    method: 'POST',
    url: `/api/v1/md5-lists/${id}/entries`,
    headers: { authorization: `Bearer ${token}`, 'content-type': type },
    payload: body,
  });
  return { status: res.statusCode, body: res.json() as any };
}

t.test('MD5 suppression lists', async (t) => {
  const { app, sql } = await buildTestApp(t, { env: { MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__BULK: '100000' } });
  const owner = await registerTenant(app);
  const created = await call(app, 'POST', '/md5-lists', { token: owner.token, body: { name: '  Advertiser A  ' } });
  t.equal(created.status, 201);
  t.match(created.body.data, { name: 'Advertiser A', entry_count: 0 });
  const id: string = created.body.data.id;

  await t.test('uploading hashes: added, duplicates, invalid with their first line numbers', async (t) => {
    const lines = [
      md5('ann@example.com'),
      '',
      md5('bob@example.com').toUpperCase(),
      `  ${md5('carl@example.com')}  \r`,
      md5('ann@example.com'),
      'not-a-hash',
      md5('dana@example.com').slice(0, 31),
      'ann@example.com',
    ];
    const res = await uploadHashes(app, owner.token, id, lines.join('\n'));
    t.equal(res.status, 200);
    t.same(res.body.data, { added: 3, duplicates: 1, invalid: 3, invalid_lines: [6, 7, 8] });
    const again = await uploadHashes(app, owner.token, id, `${md5('bob@example.com')}\n${md5('erin@example.com')}\n`);
    t.same(again.body.data, { added: 1, duplicates: 1, invalid: 0, invalid_lines: [] }, 'hashes already stored are duplicates');
    const read = await call(app, 'GET', `/md5-lists/${id}`, { token: owner.token });
    t.equal(read.body.data.entry_count, 4, 'entry_count follows the entries');
    const [stored] = await sql<
      { n: number; len: number }[]
    >`select count(*)::int as n, max(length(hash))::int as len from md5_list_entries where list_id = ${id}`;
    t.match(stored, { n: 4, len: 16 }, 'stored as 16-byte values');
  });

  await t.test('many hashes cross batches; only the first ten invalid lines are named', async (t) => {
    const lines: string[] = [];
    for (let i = 0; i < 12_000; i++) lines.push(md5(`bulk${i}@example.com`));
    for (let i = 0; i < 15; i++) lines.push('zz');
    const res = await uploadHashes(app, owner.token, id, `${lines.join('\n')}\n`);
    t.match(res.body.data, { added: 12_000, duplicates: 0, invalid: 15 });
    t.same(res.body.data.invalid_lines, [12001, 12002, 12003, 12004, 12005, 12006, 12007, 12008, 12009, 12010]);
  });

  await t.test('the send look-up: which addresses of a batch are listed, in one query', async (t) => {
    const listed = await isListed(sql, owner.tenantId, id, ['ann@example.com', 'bob@example.com', 'zed@example.com', 'bulk42@example.com', 'Carl@Example.com']);
    t.same([...listed].sort(), ['Carl@Example.com', 'ann@example.com', 'bob@example.com', 'bulk42@example.com'], 'md5 of the lower-cased address');
    const other = await registerTenant(app);
    t.same([...(await isListed(sql, other.tenantId, id, ['ann@example.com']))], [], "another tenant's list holds nothing for it");
    t.same([...(await isListed(sql, owner.tenantId, 'nope', ['ann@example.com']))], []);
    t.same([...(await isListed(sql, owner.tenantId, id, []))], []);
  });

  await t.test('listing, content types and bad names', async (t) => {
    await call(app, 'POST', '/md5-lists', { token: owner.token, body: { name: 'Second' } });
    const list = await call(app, 'GET', '/md5-lists?limit=1', { token: owner.token });
    t.equal(list.body.data.length, 1);
    t.equal(list.body.data[0].name, 'Second', 'newest first');
    t.equal(list.body.total, 2);
    t.ok(list.body.next_cursor);
    t.equal((await call(app, 'POST', '/md5-lists', { token: owner.token, body: { name: '   ' } })).status, 422);
    t.equal((await call(app, 'POST', '/md5-lists', { token: owner.token, body: { name: 'x', extra: 1 } })).status, 400);
    const json = await uploadHashes(app, owner.token, id, '["abc"]', 'application/json');
    t.equal(json.status, 415);
    t.equal(json.body.error, 'unsupported_media_type');
  });

  await t.test('isolation and scopes', async (t) => {
    const other = await registerTenant(app);
    for (const [method, url] of [
      ['GET', `/md5-lists/${id}`],
      ['DELETE', `/md5-lists/${id}`],
      ['GET', '/md5-lists/not-a-uuid'],
    ] as const) {
      const res = await call(app, method, url, { token: other.token });
      t.equal(res.status, 404, `${method} ${url}`);
      t.equal(res.body.error, 'not_found');
    }
    const foreign = await uploadHashes(app, other.token, id, `${md5('x@example.com')}\n`);
    t.equal(foreign.status, 404);
    t.equal((await call(app, 'GET', '/md5-lists', { token: other.token })).body.data.length, 0);
    const reader = await createKey(app, owner, { scopes: ['lists:read'] });
    t.equal((await call(app, 'GET', `/md5-lists/${id}`, { token: reader.key })).status, 200);
    t.equal((await uploadHashes(app, reader.key, id, `${md5('x@example.com')}\n`)).status, 403);
    t.equal((await call(app, 'POST', '/md5-lists', { token: reader.key, body: { name: 'no' } })).status, 403);
    const contacts = await createKey(app, owner, { scopes: ['contacts:write'] });
    t.equal((await call(app, 'GET', '/md5-lists', { token: contacts.key })).status, 403);
    const writer = await createKey(app, owner, { scopes: ['lists:write'] });
    t.equal((await uploadHashes(app, writer.key, id, `${md5('w@example.com')}\n`)).status, 200);
  });

  await t.test('delete removes the list and its hashes', async (t) => {
    const del = await call(app, 'DELETE', `/md5-lists/${id}`, { token: owner.token });
    t.match(del.body.data, { deleted: true, id });
    t.equal((await call(app, 'GET', `/md5-lists/${id}`, { token: owner.token })).status, 404);
    const [left] = await sql<{ n: number }[]>`select count(*)::int as n from md5_list_entries where list_id = ${id}`;
    t.equal(left!.n, 0);
    t.equal((await call(app, 'DELETE', `/md5-lists/${id}`, { token: owner.token })).status, 404);
  });
});
