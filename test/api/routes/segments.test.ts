// Segments through the API: CRUD with audit, paging, preview and count evaluated when used, refusals with paths, stale rules, scopes, roles and tenant
// isolation.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import type { Sql } from '../../../shared/db/connection.js';
import { buildTestApp, call, countRows, createKey, registerTenant, type TestApp, type TestTenant } from '../../helpers/app.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';
import { addMember } from '../../helpers/team.js';

const DAY = 86_400_000;
const field = (f: string, operator: string, value?: unknown) => ({ type: 'field', field: f, operator, ...(value !== undefined ? { value } : {}) });
const PROS = { op: 'AND', rules: [field('custom_fields.plan', 'eq', 'PRO')] };

async function addField(sql: Sql, tenantId: string, key: string, type: string): Promise<void> {
  await sql`insert into contact_custom_fields (tenant_id, key, label, type, created_at, updated_at)
            values (${tenantId}, ${key}, ${key}, ${type}, now(), now())`;
}

async function addContact(
  sql: Sql,
  tenantId: string,
  email: string,
  extra: { country?: string; status?: string; custom?: Record<string, unknown> } = {},
): Promise<string> {
  const [row] = await sql<{ id: string }[]>`
    insert into contacts (tenant_id, email, email_hash, country, status, custom_fields, created_at, updated_at)
    values (${tenantId}, ${email}, '\\x00', ${extra.country ?? null}, ${extra.status ?? 'active'}, ${sql.json((extra.custom ?? {}) as never)}, now(), now())
    returning id`;
  return row!.id;
}

async function addList(sql: Sql, tenantId: string, members: string[] = []): Promise<string> {
  const [row] = await sql<
    { id: string }[]
  >`insert into lists (tenant_id, name, created_at, updated_at) values (${tenantId}, ${randomUUID()}, now(), now()) returning id`;
  for (const contactId of members)
    await sql`insert into list_members (list_id, contact_id, tenant_id, added_at) values (${row!.id}, ${contactId}, ${tenantId}, now())`;
  return row!.id;
}

async function addOpen(sql: Sql, tenantId: string, recipient: string, ageDays: number): Promise<void> {
  await sql`insert into events (id, tenant_id, type, recipient, occurred_at)
            values (${randomUUID()}, ${tenantId}, 'open', ${recipient}, ${new Date(Date.now() - ageDays * DAY)})`;
}

async function addSegment(s: TestApp, token: string, body: Record<string, unknown>) {
  const res = await call(s.app, 'POST', '/segments', { token, body });
  if (res.status !== 201) throw new Error(`create segment: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** A tenant with a plan field, three contacts and a list. */
async function audience(s: TestApp, owner: TestTenant) {
  await addField(s.sql, owner.tenantId, 'plan', 'select');
  const ann = await addContact(s.sql, owner.tenantId, 'ann@example.test', { country: 'FR', custom: { plan: 'pro' } });
  const bob = await addContact(s.sql, owner.tenantId, 'bob@example.test', { country: 'US', custom: { plan: 'free' } });
  await addContact(s.sql, owner.tenantId, 'cy@example.test', { country: 'US', custom: { plan: 'pro' }, status: 'deleted' });
  const list = await addList(s.sql, owner.tenantId, [ann]);
  return { ann, bob, list };
}

t.test('create, read, list, update, delete; every change audited', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const { list } = await audience(s, owner);
  const definition = { op: 'OR', rules: [PROS, { type: 'list', operator: 'in', list_id: list.toUpperCase() }] };
  const created = await call(s.app, 'POST', '/segments', { token: owner.token, body: { name: '  Pros  ', definition } });
  t.equal(created.status, 201);
  const seg = created.body.data;
  t.match(seg, { id: String, name: 'Pros', stale_rules: [], created_at: String });
  t.same(seg.definition, { op: 'OR', rules: [PROS, { type: 'list', operator: 'in', list_id: list }] }, 'stored in its normal form');
  t.same((await call(s.app, 'GET', `/segments/${seg.id}`, { token: owner.token })).body.data, seg);

  let res = await call(s.app, 'PATCH', `/segments/${seg.id}`, { token: owner.token, body: { name: 'Pro plans' } });
  t.equal(res.status, 200);
  t.same(res.body.data.definition, seg.definition, 'a rename keeps the definition');
  res = await call(s.app, 'PATCH', `/segments/${seg.id}`, { token: owner.token, body: { definition: PROS } });
  t.same([res.body.data.name, res.body.data.definition], ['Pro plans', PROS]);
  t.equal((await call(s.app, 'PATCH', `/segments/${seg.id}`, { token: owner.token, body: {} })).status, 200, 'an empty PATCH changes nothing');
  t.equal((await call(s.app, 'PATCH', `/segments/${seg.id}`, { token: owner.token, body: { colour: 'red' } })).status, 400, 'unknown field');

  const del = await call(s.app, 'DELETE', `/segments/${seg.id}`, { token: owner.token });
  t.same(del.body.data, { deleted: true, id: seg.id });
  t.equal((await call(s.app, 'GET', `/segments/${seg.id}`, { token: owner.token })).status, 404);
  t.equal((await call(s.app, 'DELETE', `/segments/${seg.id}`, { token: owner.token })).status, 404, 'deleting twice');
  const audits = await s.sql<{ action: string; metadata: Record<string, unknown> }[]>`
    select action, metadata from audit_events where resource_type = 'segment' and resource_id = ${seg.id} order by id`;
  t.same(
    audits.map((a) => [a.action, a.metadata]),
    [
      ['segment.created', { name: 'Pros' }],
      ['segment.updated', { name: 'Pro plans', fields: ['name'] }],
      ['segment.updated', { name: 'Pro plans', fields: ['definition'] }],
      ['segment.deleted', { name: 'Pro plans' }],
    ],
  );
});

t.test('pages newest first with a cursor and a total', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await addSegment(s, owner.token, { name: `S${i}`, definition: { op: 'AND', rules: [field('email', 'exists')] } })).id);
  const seen: string[] = [];
  let url = '/segments?limit=2';
  for (let i = 0; i < 10 && url; i++) {
    const res = await call(s.app, 'GET', url, { token: owner.token });
    t.equal(res.body.total, 5);
    seen.push(...res.body.data.map((x: { id: string }) => x.id));
    url = res.body.next_cursor ? `/segments?limit=2&after=${res.body.next_cursor}` : '';
  }
  t.same(seen, [...ids].reverse(), 'each once, newest first');
  t.equal((await call(s.app, 'GET', '/segments?after=bogus', { token: owner.token })).status, 400);
  t.equal((await call(s.app, 'GET', '/segments?limit=201', { token: owner.token })).status, 422, 'the page limit is 200');
});

t.test('preview and count are evaluated when used', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const { list } = await audience(s, owner);
  const preview = async (definition: unknown) => call(s.app, 'POST', '/segments/preview', { token: owner.token, body: { definition } });
  t.same((await preview(PROS)).body, { ok: true, data: { count: 1 } }, 'case-insensitive; the deleted pro is left out');
  t.equal(
    (await preview({ op: 'AND', rules: [field('status', 'in', ['active', 'deleted']), PROS] })).body.data.count,
    2,
    'naming status brings deleted contacts in',
  );
  t.equal((await preview({ op: 'OR', rules: [field('country', 'eq', 'us'), { type: 'list', operator: 'in', list_id: list }] })).body.data.count, 2);
  const opened = { op: 'AND', rules: [{ type: 'engagement', event: 'opened', operator: 'within', days: 30 }] };
  t.equal((await preview(opened)).body.data.count, 0);

  const seg = await addSegment(s, owner.token, { name: 'Openers', definition: opened });
  await addOpen(s.sql, owner.tenantId, 'bob@example.test', 3);
  await addOpen(s.sql, owner.tenantId, 'ann@example.test', 45);
  t.same(
    (await call(s.app, 'GET', `/segments/${seg.id}/count`, { token: owner.token })).body.data,
    { count: 1, stale_rules: [] },
    'a later open counts: nothing is frozen at save',
  );
  t.equal(await countRows(s.sql, 'segments', owner.tenantId), 1, 'preview stored nothing');
});

t.test('a field deleted after saving: the rule is stale, matches nothing, and is reported', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  await audience(s, owner);
  const seg = await addSegment(s, owner.token, { name: 'Not pro', definition: { op: 'AND', rules: [field('custom_fields.plan', 'neq', 'pro')] } });
  t.equal((await call(s.app, 'GET', `/segments/${seg.id}/count`, { token: owner.token })).body.data.count, 1);
  await s.sql`delete from contact_custom_fields where tenant_id = ${owner.tenantId} and key = 'plan'`;
  const count = await call(s.app, 'GET', `/segments/${seg.id}/count`, { token: owner.token });
  t.match(count.body.data, { count: 0, stale_rules: [{ path: 'definition.rules[0]', problem: /"plan" is not a field of the custom-field catalog/ }] });
  t.match((await call(s.app, 'GET', `/segments/${seg.id}`, { token: owner.token })).body.data.stale_rules, [{ path: 'definition.rules[0]' }]);
  t.match((await call(s.app, 'GET', '/segments', { token: owner.token })).body.data, [{ id: seg.id, stale_rules: [{ path: 'definition.rules[0]' }] }]);
  const fix = await call(s.app, 'PATCH', `/segments/${seg.id}`, {
    token: owner.token,
    body: { definition: { op: 'AND', rules: [field('country', 'neq', 'fr')] } },
  });
  t.same(fix.body.data.stale_rules, []);
});

t.test('refusals: 422 naming the path, 400 for unexpected fields', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  await audience(s, owner);
  const cases: [unknown, RegExp][] = [
    [{ op: 'AND', rules: [field('custom_fields.plan', 'gt', 'a')] }, /^definition\.rules\[0\]\.operator: gt does not apply/],
    [{ op: 'AND', rules: [field('custom_fields.nope', 'eq', 'a')] }, /^definition\.rules\[0\]\.field: "nope" is not a field/],
    [
      { op: 'OR', rules: [field('email', 'exists'), { op: 'AND', rules: [field('email', 'in', ['a', 1])] }] },
      /^definition\.rules\[1\]\.rules\[0\]\.value\[1\]: must be a string/,
    ],
    [{ op: 'AND', rules: [{ type: 'list', operator: 'in', list_id: randomUUID() }] }, /^definition\.rules\[0\]\.list_id: is not one of your lists/],
    [{ op: 'AND', rules: [field("email' or 1=1 --", 'exists')] }, /^definition\.rules\[0\]\.field: /],
    ['AND', /^definition: /],
  ];
  for (const [definition, message] of cases) {
    for (const [method, url, body] of [
      ['POST', '/segments', { name: 'x', definition }],
      ['POST', '/segments/preview', { definition }],
    ] as const) {
      const res = await call(s.app, method, url, { token: owner.token, body });
      t.equal(res.status, 422, `${url} ${message}`);
      t.match(res.body, { error: 'validation_error', message });
    }
  }
  t.match((await call(s.app, 'POST', '/segments', { token: owner.token, body: { name: ' ', definition: PROS } })).body, {
    error: 'validation_error',
    message: /^name: must not be blank/,
  });
  t.equal((await call(s.app, 'POST', '/segments', { token: owner.token, body: { definition: PROS } })).status, 422, 'name is required');
  t.equal((await call(s.app, 'POST', '/segments', { token: owner.token, body: { name: 'x', definition: PROS, extra: 1 } })).status, 400);
  t.equal((await call(s.app, 'POST', '/segments/preview', { token: owner.token, body: { definition: PROS, name: 'x' } })).status, 400);
  t.equal(await countRows(s.sql, 'segments'), 0, 'nothing was stored');
});

t.test('scopes: lists:read reads, counts and previews; lists:write changes; contacts scopes do neither', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  await audience(s, owner);
  const seg = await addSegment(s, owner.token, { name: 'Pros', definition: PROS });
  const reader = await createKey(s.app, owner, { scopes: ['lists:read'] });
  const writer = await createKey(s.app, owner, { scopes: ['lists:write'] });
  const contacts = await createKey(s.app, owner, { scopes: ['contacts:read', 'contacts:write'] });
  const reads = [
    { method: 'GET' as const, url: '/segments' },
    { method: 'GET' as const, url: `/segments/${seg.id}` },
    { method: 'GET' as const, url: `/segments/${seg.id}/count` },
    { method: 'POST' as const, url: '/segments/preview', body: { definition: PROS } },
  ];
  const writes = [
    { method: 'POST' as const, url: '/segments', body: { name: 'By key', definition: PROS } },
    { method: 'PATCH' as const, url: `/segments/${seg.id}`, body: { name: 'Renamed' } },
    { method: 'DELETE' as const, url: `/segments/${seg.id}` },
  ];
  for (const r of reads) {
    t.equal((await call(s.app, r.method, r.url, { token: reader.key, ...(r.body ? { body: r.body } : {}) })).status, 200, `lists:read ${r.method} ${r.url}`);
    for (const key of [writer, contacts]) {
      const res = await call(s.app, r.method, r.url, { token: key.key, ...(r.body ? { body: r.body } : {}) });
      t.same([res.status, res.body.error], [403, 'invalid_scope'], `${r.method} ${r.url} needs lists:read`);
    }
  }
  for (const w of writes) {
    for (const key of [reader, contacts]) {
      const res = await call(s.app, w.method, w.url, { token: key.key, ...(w.body ? { body: w.body } : {}) });
      t.same([res.status, res.body.error], [403, 'invalid_scope'], `${w.method} ${w.url} needs lists:write`);
    }
    const res = await call(s.app, w.method, w.url, { token: writer.key, ...(w.body ? { body: w.body } : {}) });
    t.ok(res.status === 200 || res.status === 201, `lists:write ${w.method} ${w.url}`);
  }
  t.equal((await call(s.app, 'GET', '/segments')).status, 401);
});

t.test('roles: a viewer reads and previews, a developer writes', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  await audience(s, owner);
  const seg = await addSegment(s, owner.token, { name: 'Pros', definition: PROS });
  const viewer = await addMember(s.app, owner, 'viewer');
  const developer = await addMember(s.app, owner, 'developer');
  t.equal((await call(s.app, 'GET', `/segments/${seg.id}/count`, { token: viewer.token })).status, 200);
  t.equal((await call(s.app, 'POST', '/segments/preview', { token: viewer.token, body: { definition: PROS } })).status, 200, 'previewing writes nothing');
  const refused = await call(s.app, 'POST', '/segments', { token: viewer.token, body: { name: 'x', definition: PROS } });
  t.same([refused.status, refused.body.error], [403, 'forbidden']);
  t.equal((await call(s.app, 'DELETE', `/segments/${seg.id}`, { token: viewer.token })).status, 403);
  t.equal((await call(s.app, 'POST', '/segments', { token: developer.token, body: { name: 'x', definition: PROS } })).status, 201);
});

t.test("isolation: another tenant's segment is 404, its lists 422, its contacts and events never counted", async (t) => {
  const s = await buildTestApp(t);
  const { owner, other } = await twoTenants(s.app);
  await audience(s, owner);
  await audience(s, other);
  const theirList = await addList(s.sql, other.tenantId);
  await addOpen(s.sql, other.tenantId, 'ann@example.test', 1);
  const seg = await addSegment(s, owner.token, { name: 'Pros', definition: PROS });
  const otherKey = await createKey(s.app, other);
  const requests = [
    { method: 'GET' as const, url: `/segments/${seg.id}` },
    { method: 'GET' as const, url: `/segments/${seg.id}/count` },
    { method: 'PATCH' as const, url: `/segments/${seg.id}`, body: { name: 'hijacked' } },
    { method: 'DELETE' as const, url: `/segments/${seg.id}` },
    { method: 'GET' as const, url: '/segments/not-a-uuid' },
    { method: 'GET' as const, url: '/segments/not-a-uuid/count' },
    { method: 'PATCH' as const, url: '/segments/not-a-uuid', body: { name: 'x' } },
    { method: 'DELETE' as const, url: `/segments/${randomUUID()}` },
  ];
  await assertForeign404(t, s.app, other.token, requests);
  await assertForeign404(t, s.app, otherKey.key, requests);
  t.equal((await call(s.app, 'GET', '/segments', { token: other.token })).body.total, 0);
  const foreign = { op: 'AND', rules: [{ type: 'list', operator: 'not_in', list_id: theirList }] };
  for (const [method, url, body] of [
    ['POST', '/segments', { name: 'x', definition: foreign }],
    ['POST', '/segments/preview', { definition: foreign }],
    ['PATCH', `/segments/${seg.id}`, { definition: foreign }],
  ] as const) {
    const res = await call(s.app, method, url, { token: owner.token, body });
    t.match([res.status, res.body.message], [422, /^definition\.rules\[0\]\.list_id: is not one of your lists/], `${method} ${url}`);
  }
  const count = async (definition: unknown) => (await call(s.app, 'POST', '/segments/preview', { token: owner.token, body: { definition } })).body.data.count;
  t.equal(await count({ op: 'AND', rules: [field('email', 'exists')] }), 2, "only the tenant's own (non-deleted) contacts");
  t.equal(
    await count({ op: 'AND', rules: [{ type: 'engagement', event: 'opened', operator: 'within', days: 30 }] }),
    0,
    "the other tenant's open of the same address does not count",
  );
  t.same((await call(s.app, 'GET', `/segments/${seg.id}`, { token: owner.token })).body.data.name, 'Pros', 'unchanged for its owner');
});
