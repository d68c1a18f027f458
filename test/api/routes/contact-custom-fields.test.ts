// The custom-field catalog through the API: create and list in position order, key rules, reserved names, select options, immutability, the cap, delete
// orphaning values, scopes, isolation.
import t from 'tap';
import { MAX_CUSTOM_FIELDS } from '../../../shared/audiences/custom-fields/service.js';
import { buildTestApp, call, countRows, createKey, registerTenant, type ApiResponse } from '../../helpers/app.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';

const { app, sql } = await buildTestApp(t);

const create = (token: string, body: Record<string, unknown>): Promise<ApiResponse> => call(app, 'POST', '/contact-custom-fields', { token, body });

async function field(token: string, body: Record<string, unknown>) {
  const res = await create(token, body);
  if (res.status !== 201) throw new Error(`create field: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

t.test('create, list in position order, change label, options, required and position, delete; audited', async (t) => {
  const owner = await registerTenant(app);
  const plan = await field(owner.token, { key: 'plan', label: ' Plan ', type: 'select', options: ['free', ' pro '], required: true });
  t.match(plan, {
    id: String,
    key: 'plan',
    label: 'Plan',
    type: 'select',
    options: ['free', 'pro'],
    required: true,
    position: 0,
    created_at: String,
    updated_at: String,
  });
  const age = await field(owner.token, { key: 'age', label: 'Age', type: 'number' });
  t.match(age, { options: null, required: false, position: 1 });
  const list = await call(app, 'GET', '/contact-custom-fields', { token: owner.token });
  t.equal(list.status, 200);
  t.same(
    list.body.data.items.map((f: { key: string }) => f.key),
    ['plan', 'age'],
  );

  const moved = await call(app, 'PUT', `/contact-custom-fields/${age.id}`, { token: owner.token, body: { position: 0, label: 'Age (years)', required: true } });
  t.equal(moved.status, 200);
  t.match(moved.body.data, { key: 'age', label: 'Age (years)', required: true, position: 0 });
  const reordered = await call(app, 'PUT', `/contact-custom-fields/${plan.id}`, {
    token: owner.token,
    body: { position: 5, options: ['free', 'pro', 'team'] },
  });
  t.match(reordered.body.data, { position: 5, options: ['free', 'pro', 'team'] });
  const after = await call(app, 'GET', '/contact-custom-fields', { token: owner.token });
  t.same(
    after.body.data.items.map((f: { key: string }) => f.key),
    ['age', 'plan'],
    'position order',
  );
  const same = await call(app, 'PUT', `/contact-custom-fields/${plan.id}`, { token: owner.token, body: { key: 'plan', type: 'select' } });
  t.equal(same.status, 200, 'key and type with their own values are accepted');

  const del = await call(app, 'DELETE', `/contact-custom-fields/${age.id}`, { token: owner.token });
  t.equal(del.status, 200);
  t.same(del.body.data, { status: 'deleted' });
  t.equal((await call(app, 'DELETE', `/contact-custom-fields/${age.id}`, { token: owner.token })).status, 404, 'deleting twice');
  t.equal((await call(app, 'PUT', `/contact-custom-fields/not-a-uuid`, { token: owner.token, body: { label: 'x' } })).status, 404);

  const audit = await sql<
    { action: string }[]
  >`select action from audit_events where tenant_id = ${owner.tenantId} and resource_type = 'custom_field' order by id`;
  t.same(
    audit.map((a) => a.action),
    ['custom_field.created', 'custom_field.created', 'custom_field.updated', 'custom_field.updated', 'custom_field.deleted'],
  );
});

t.test('key rules, reserved names, duplicates (409), select options, unknown and immutable fields', async (t) => {
  const owner = await registerTenant(app);
  for (const key of ['', 'Plan', '1st', '_x', 'with-dash', 'sp ace', 'é', 'a'.repeat(51)]) {
    const res = await create(owner.token, { key, label: 'X', type: 'text' });
    t.equal(res.status, 422, `key ${JSON.stringify(key)}`);
    t.match(res.body.message, /^key: /);
  }
  t.equal((await create(owner.token, { key: 'a'.repeat(50), label: 'X', type: 'text' })).status, 201, '50 characters');
  for (const key of ['email', 'first_name', 'status', 'custom_fields', 'tenant_id', 'best_send_hour', 'email_hash', 'erased_at']) {
    const res = await create(owner.token, { key, label: 'X', type: 'text' });
    t.equal(res.status, 422, `reserved ${key}`);
    t.match(res.body.message, /^key: .*reserved/);
  }
  await field(owner.token, { key: 'city_code', label: 'X', type: 'text' });
  const dup = await create(owner.token, { key: 'city_code', label: 'Y', type: 'number' });
  t.equal(dup.status, 409);
  t.equal(dup.body.error, 'conflict');

  const cases: [Record<string, unknown>, number, RegExp][] = [
    [{ key: 'tier', label: 'T', type: 'select' }, 422, /^options: /],
    [{ key: 'tier', label: 'T', type: 'select', options: [] }, 422, /^options: /],
    [{ key: 'tier', label: 'T', type: 'select', options: ['a', 'a'] }, 422, /^options\.1: /],
    [{ key: 'tier', label: 'T', type: 'select', options: ['a', '  '] }, 422, /^options\.1: /],
    [{ key: 'tier', label: 'T', type: 'text', options: ['a'] }, 422, /^options: only a select/],
    [{ key: 'tier', label: '  ', type: 'text' }, 422, /^label: /],
    [{ key: 'tier', label: 'T', type: 'colour' }, 422, /^type: /],
    [{ key: 'tier', type: 'text' }, 422, /^label: is required/],
    [{ key: 'tier', label: 'T', type: 'text', position: 3 }, 400, /unexpected field.*position/],
  ];
  for (const [body, status, message] of cases) {
    const res = await create(owner.token, body);
    t.equal(res.status, status, JSON.stringify(body));
    t.match(res.body.message, message, JSON.stringify(body));
  }

  const tier = await field(owner.token, { key: 'tier', label: 'T', type: 'select', options: ['a'] });
  const text = await field(owner.token, { key: 'note', label: 'N', type: 'text' });
  const changes: [string, Record<string, unknown>, number, RegExp][] = [
    [tier.id, { key: 'level' }, 422, /^key: is immutable/],
    [tier.id, { type: 'text' }, 422, /^type: is immutable/],
    [tier.id, { options: [] }, 422, /^options: /],
    [tier.id, { options: null }, 422, /^options: /],
    [text.id, { options: ['x'] }, 422, /^options: only a select/],
    [text.id, { position: -1 }, 422, /^position: /],
    [text.id, { id: text.id }, 400, /unexpected field/],
  ];
  for (const [id, body, status, message] of changes) {
    const res = await call(app, 'PUT', `/contact-custom-fields/${id}`, { token: owner.token, body });
    t.equal(res.status, status, JSON.stringify(body));
    t.match(res.body.message, message, JSON.stringify(body));
  }
  t.same(
    (await call(app, 'PUT', `/contact-custom-fields/${text.id}`, { token: owner.token, body: { options: null } })).body.data.options,
    null,
    'null options on a text field',
  );
});

t.test(`a tenant holds at most ${MAX_CUSTOM_FIELDS} fields`, async (t) => {
  const owner = await registerTenant(app);
  await sql`
    insert into contact_custom_fields (tenant_id, key, label, type, position, created_at, updated_at)
    select ${owner.tenantId}, 'f' || i, 'F' || i, 'text', i, now(), now() from generate_series(1, ${MAX_CUSTOM_FIELDS}) as i`;
  const res = await create(owner.token, { key: 'one_more', label: 'X', type: 'text' });
  t.equal(res.status, 409);
  t.match(res.body.message, new RegExp(`${MAX_CUSTOM_FIELDS} fields`));
  await call(app, 'DELETE', `/contact-custom-fields/${(await call(app, 'GET', '/contact-custom-fields', { token: owner.token })).body.data.items[0].id}`, {
    token: owner.token,
  });
  t.equal((await create(owner.token, { key: 'one_more', label: 'X', type: 'text' })).status, 201, 'room again after a delete');
});

t.test('deleting a field orphans its values: kept in the row, shown nowhere, cleared when the key is reused', async (t) => {
  const owner = await registerTenant(app);
  const color = await field(owner.token, { key: 'color', label: 'Colour', type: 'text' });
  await field(owner.token, { key: 'size', label: 'Size', type: 'number' });
  const made = await call(app, 'POST', '/contacts', { token: owner.token, body: { email: 'orphan@example.com', custom_fields: { color: 'red', size: 3 } } });
  t.equal(made.status, 201, JSON.stringify(made.body));
  t.same(made.body.data.custom_fields, { color: 'red', size: 3 });

  await call(app, 'DELETE', `/contact-custom-fields/${color.id}`, { token: owner.token });
  const got = await call(app, 'GET', `/contacts/${made.body.data.id}`, { token: owner.token });
  t.same(got.body.data.custom_fields, { size: 3 }, 'the orphaned value is not shown');
  const listed = await call(app, 'GET', '/contacts', { token: owner.token });
  t.same(listed.body.data.items[0].custom_fields, { size: 3 }, 'nor listed');
  const [row] = await sql<{ custom_fields: Record<string, unknown> }[]>`select custom_fields from contacts where id = ${made.body.data.id}`;
  t.same(row!.custom_fields, { color: 'red', size: 3 }, 'but stays stored');
  const write = await call(app, 'PATCH', `/contacts/${made.body.data.id}`, { token: owner.token, body: { custom_fields: { color: 'blue' } } });
  t.equal(write.status, 422, 'a deleted field cannot be written');
  t.match(write.body.message, /^custom_fields\.color: /);

  await field(owner.token, { key: 'color', label: 'Colour code', type: 'number' });
  const [cleared] = await sql<{ custom_fields: Record<string, unknown> }[]>`select custom_fields from contacts where id = ${made.body.data.id}`;
  t.same(cleared!.custom_fields, { size: 3 }, 'a new field with the key starts empty');
});

t.test('scopes: contacts:read lists, contacts:write changes; another scope is 403 invalid_scope', async (t) => {
  const owner = await registerTenant(app);
  const made = await field(owner.token, { key: 'k', label: 'K', type: 'text' });
  const reader = (await createKey(app, owner, { scopes: ['contacts:read'] })).key;
  const writer = (await createKey(app, owner, { scopes: ['contacts:write'] })).key;
  const other = (await createKey(app, owner, { scopes: ['lists:read'] })).key;
  t.equal((await call(app, 'GET', '/contact-custom-fields', { token: reader })).status, 200);
  for (const [method, url, body] of [
    ['POST', '/contact-custom-fields', { key: 'x', label: 'X', type: 'text' }],
    ['PUT', `/contact-custom-fields/${made.id}`, { label: 'Y' }],
    ['DELETE', `/contact-custom-fields/${made.id}`, undefined],
  ] as const) {
    const res = await call(app, method, url, { token: reader, ...(body ? { body } : {}) });
    t.equal(res.status, 403, `${method} ${url} with contacts:read`);
    t.equal(res.body.error, 'invalid_scope');
  }
  t.equal((await call(app, 'GET', '/contact-custom-fields', { token: other })).status, 403);
  t.equal((await create(writer, { key: 'x', label: 'X', type: 'text' })).status, 201);
  t.equal(await countRows(sql, 'contact_custom_fields', owner.tenantId), 2);
});

t.test("another tenant's field is 404 on every id route, and its catalog is its own", async (t) => {
  const { owner, other } = await twoTenants(app);
  const made = await field(owner.token, { key: 'shared_key', label: 'K', type: 'text' });
  await assertForeign404(t, app, other.token, [
    { method: 'PUT', url: `/contact-custom-fields/${made.id}`, body: { label: 'stolen' } },
    { method: 'DELETE', url: `/contact-custom-fields/${made.id}` },
  ]);
  t.same((await call(app, 'GET', '/contact-custom-fields', { token: other.token })).body.data.items, []);
  t.equal((await create(other.token, { key: 'shared_key', label: 'K', type: 'number' })).status, 201, 'keys are per tenant');
  t.equal((await call(app, 'GET', '/contact-custom-fields', { token: owner.token })).body.data.items[0].label, 'K');
});
