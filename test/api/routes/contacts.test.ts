// Contacts through the API: create and normalisation, upsert, read, change, delete and restore, every refusal, listing (status, q, paging, totals), scopes,
// isolation.
import t from 'tap';
import type { Clock } from '../../../shared/kernel/clock.js';
import { SEARCH_COUNT_CAP } from '../../../shared/audiences/contacts/service.js';
import { buildTestApp, call, countRows, createKey, registerTenant, type ApiResponse } from '../../helpers/app.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';

/** Real time, but never the same millisecond twice: "newest first" must not hang on a tie broken by random ids. */
let last = 0;
const clock: Clock = { now: () => new Date((last = Math.max(Date.now(), last + 1))) };
const { app, sql } = await buildTestApp(t, { clock });

const post = (token: string, body: unknown, query = ''): Promise<ApiResponse> => call(app, 'POST', `/contacts${query}`, { token, body });

async function contact(token: string, body: Record<string, unknown>) {
  const res = await post(token, body);
  if (res.status !== 201) throw new Error(`create contact: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

async function catalog(token: string, fields: Record<string, unknown>[]): Promise<void> {
  for (const body of fields) {
    const res = await call(app, 'POST', '/contact-custom-fields', { token, body });
    if (res.status !== 201) throw new Error(`create field: ${res.status} ${JSON.stringify(res.body)}`);
  }
}

const emailsOf = (res: ApiResponse) => res.body.data.items.map((c: { email: string }) => c.email);

t.test('create normalises the address and profile, answers every reserved column; read it back', async (t) => {
  const owner = await registerTenant(app);
  await catalog(owner.token, [
    { key: 'plan', label: 'Plan', type: 'select', options: ['free', 'pro'] },
    { key: 'seats', label: 'Seats', type: 'number' },
    { key: 'renews', label: 'Renews', type: 'datetime' },
  ]);
  const res = await post(owner.token, {
    email: '  Ann.Lee+News@Bücher.Example\t',
    first_name: '  Ann ',
    last_name: '',
    timezone: 'europe/paris',
    crm_id: 'C-1',
    custom_fields: { plan: 'pro', seats: 4, renews: '2027-01-31T10:00:00+01:00' },
  });
  t.equal(res.status, 201, JSON.stringify(res.body));
  const made = res.body.data;
  t.match(made, {
    id: String,
    tenant_id: owner.tenantId,
    email: 'ann.lee+news@xn--bcher-kva.example',
    first_name: 'Ann',
    last_name: null,
    timezone: 'Europe/Paris',
    crm_id: 'C-1',
    phone: null,
    crm_lead_id: null,
    status: 'active',
    best_send_hour: null,
    unsubscribed_at: null,
    erased_at: null,
    created_at: String,
    updated_at: String,
    created: true,
  });
  t.same(made.custom_fields, { plan: 'pro', seats: 4, renews: '2027-01-31T09:00:00.000Z' }, 'datetimes stored as UTC');
  const got = await call(app, 'GET', `/contacts/${made.id}`, { token: owner.token });
  t.equal(got.status, 200);
  const { created, ...stored } = made;
  t.equal(created, true);
  t.same(got.body.data, stored);
  t.equal((await call(app, 'GET', '/contacts/not-a-uuid', { token: owner.token })).status, 404);
  t.equal((await call(app, 'GET', '/contacts/00000000-0000-4000-8000-000000000000', { token: owner.token })).status, 404);
});

t.test('an existing address is 409 in any spelling; ?upsert=true updates it (200, created false); addresses are per tenant', async (t) => {
  const { owner, other } = await twoTenants(app);
  await catalog(owner.token, [
    { key: 'tier', label: 'Tier', type: 'text' },
    { key: 'score', label: 'Score', type: 'number' },
  ]);
  const first = await contact(owner.token, { email: 'dup@example.com', first_name: 'Dee', city: 'Oslo', custom_fields: { tier: 'gold', score: 1 } });
  for (const email of ['dup@example.com', 'DUP@Example.COM', ' dup@example.com ']) {
    const res = await post(owner.token, { email });
    t.equal(res.status, 409, JSON.stringify(email));
    t.equal(res.body.error, 'conflict');
    t.match(res.body.message, new RegExp(`already exists \\(id ${first.id}\\).*upsert=true`));
  }
  const up = await post(owner.token, { email: 'Dup@example.com', last_name: 'Dunn', city: null, custom_fields: { score: 2, tier: null } }, '?upsert=true');
  t.equal(up.status, 200);
  t.match(up.body.data, { id: first.id, created: false, first_name: 'Dee', last_name: 'Dunn', city: null, status: 'active' });
  t.same(up.body.data.custom_fields, { score: 2 }, 'merged: set and removed');
  const fresh = await post(owner.token, { email: 'new@example.com' }, '?upsert=true');
  t.equal(fresh.status, 201);
  t.equal(fresh.body.data.created, true);
  t.equal((await post(other.token, { email: 'dup@example.com' })).status, 201, 'another tenant has its own address book');
  t.equal(await countRows(sql, 'contacts', owner.tenantId), 2);
});

t.test('status: unsubscribed stamps unsubscribed_at, re-subscribing clears it; an upsert without status keeps it', async (t) => {
  const owner = await registerTenant(app);
  const made = await contact(owner.token, { email: 'unsub@example.com', status: 'unsubscribed' });
  t.equal(made.status, 'unsubscribed');
  t.type(made.unsubscribed_at, 'string');
  const kept = await post(owner.token, { email: 'unsub@example.com', first_name: 'U' }, '?upsert=true');
  t.match(kept.body.data, { status: 'unsubscribed', unsubscribed_at: made.unsubscribed_at, first_name: 'U' }, 'an import-style upsert never resubscribes');
  const again = await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: { status: 'unsubscribed' } });
  t.equal(again.body.data.unsubscribed_at, made.unsubscribed_at, 'the first stamp stays');
  const active = await call(app, 'POST', `/contacts/${made.id}/resubscribe`, { token: owner.token, body: { reason: 'asked again' } });
  t.match(active.body.data, { status: 'active', unsubscribed_at: null });
  const unsub = await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: { status: 'unsubscribed' } });
  t.ok(unsub.body.data.unsubscribed_at > made.unsubscribed_at, 'stamped anew');
});

t.test('PATCH: profile, email (normalised, unique), custom fields merged; deleted contacts cannot change', async (t) => {
  const owner = await registerTenant(app);
  await catalog(owner.token, [
    { key: 'plan', label: 'Plan', type: 'select', options: ['a', 'b'], required: true },
    { key: 'note', label: 'Note', type: 'longtext' },
  ]);
  const made = await contact(owner.token, { email: 'patch@example.com', company: 'Acme', custom_fields: { plan: 'a', note: 'hi' } });
  const other = await contact(owner.token, { email: 'taken@example.com', custom_fields: { plan: 'b' } });
  const res = await call(app, 'PATCH', `/contacts/${made.id}`, {
    token: owner.token,
    body: { email: ' Patched@EXAMPLE.com', company: null, title: 'CTO', custom_fields: { plan: 'b', note: null } },
  });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.match(res.body.data, { email: 'patched@example.com', company: null, title: 'CTO' });
  t.same(res.body.data.custom_fields, { plan: 'b' });
  const [hash] = await sql<{ ok: boolean }[]>`select email_hash = sha256(convert_to('patched@example.com', 'UTF8')) as ok from contacts where id = ${made.id}`;
  t.ok(hash!.ok, 'the hash follows the address');
  t.same(
    (await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: {} })).body.data.email,
    'patched@example.com',
    'an empty PATCH changes nothing',
  );

  const taken = await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: { email: 'TAKEN@example.com' } });
  t.equal(taken.status, 409);
  t.match(taken.body.message, /another contact/);
  const required = await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: { custom_fields: { plan: null } } });
  t.equal(required.status, 422);
  t.match(required.body.message, /^custom_fields\.plan: is required/);

  t.equal((await call(app, 'DELETE', `/contacts/${other.id}`, { token: owner.token })).status, 200);
  const gone = await call(app, 'PATCH', `/contacts/${other.id}`, { token: owner.token, body: { first_name: 'X' } });
  t.equal(gone.status, 409);
  t.match(gone.body.message, /deleted/);
  const stillTaken = await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: { email: 'taken@example.com' } });
  t.equal(stillTaken.status, 409, 'a deleted contact keeps its address');
});

t.test('refusals: 422 naming the field, 400 for unexpected fields; nothing is written', async (t) => {
  const owner = await registerTenant(app);
  await catalog(owner.token, [
    { key: 'plan', label: 'Plan', type: 'select', options: ['a'], required: true },
    { key: 'age', label: 'Age', type: 'number' },
  ]);
  const ok = { email: 'ok@example.com', custom_fields: { plan: 'a' } };
  const cases: [Record<string, unknown>, number, RegExp][] = [
    [{ custom_fields: { plan: 'a' } }, 422, /^email: is required/],
    [{ ...ok, email: 'not an address' }, 422, /^email: /],
    [{ ...ok, email: 'a@example.com\r\nBcc: x@example.com' }, 422, /^email: /],
    [{ ...ok, email: 'a@localhost' }, 422, /^email/],
    [{ email: 'ok@example.com' }, 422, /^custom_fields\.plan: is required/],
    [{ ...ok, custom_fields: { plan: 'z' } }, 422, /^custom_fields\.plan: must be one of "a"/],
    [{ ...ok, custom_fields: { plan: 'a', age: '42' } }, 422, /^custom_fields\.age: must be a number/],
    [{ ...ok, custom_fields: { plan: 'a', shoe: 1 } }, 422, /^custom_fields\.shoe: is not a field/],
    [{ ...ok, status: 'deleted' }, 422, /^status: .*DELETE/],
    [{ ...ok, status: 'bounced' }, 422, /^status: /],
    [{ ...ok, first_name: 'a'.repeat(201) }, 422, /^first_name: .*200/],
    [{ ...ok, postal_code: '1'.repeat(21) }, 422, /^postal_code: /],
    [{ ...ok, last_name: 'Doe\r\nBcc: x' }, 422, /^last_name: .*one line/],
    [{ ...ok, timezone: 'Mars/Olympus' }, 422, /^timezone: /],
    [{ ...ok, first_name: 7 }, 422, /^first_name: /],
    [{ ...ok, best_send_hour: 9 }, 400, /unexpected field.*best_send_hour/],
    [{ ...ok, erased_at: null }, 400, /unexpected field/],
    [{ ...ok, id: '00000000-0000-4000-8000-000000000000' }, 400, /unexpected field/],
    [{ ...ok, custom_fields: [] }, 422, /^custom_fields: /],
  ];
  for (const [body, status, message] of cases) {
    const res = await post(owner.token, body);
    t.equal(res.status, status, JSON.stringify(body));
    t.match(res.body.message, message, JSON.stringify(body));
  }
  t.equal(await countRows(sql, 'contacts', owner.tenantId), 0);
  const made = await contact(owner.token, ok);
  const patch = await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: { best_send_hour: 3 } });
  t.equal(patch.status, 400, 'best_send_hour is read-only');
  t.equal((await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: { status: 'deleted' } })).status, 422);
});

t.test('DELETE marks deleted (kept, out of lists); adding the address again restores the row', async (t) => {
  const owner = await registerTenant(app);
  const made = await contact(owner.token, { email: 'del@example.com', first_name: 'Old', status: 'unsubscribed' });
  const [list] = await sql<
    { id: string }[]
  >`insert into lists (tenant_id, name, created_at, updated_at) values (${owner.tenantId}, 'L', now(), now()) returning id`;
  await sql`insert into list_members (list_id, contact_id, tenant_id, added_at) values (${list!.id}, ${made.id}, ${owner.tenantId}, now())`;
  const del = await call(app, 'DELETE', `/contacts/${made.id}`, { token: owner.token });
  t.equal(del.status, 200);
  t.same(del.body.data, { status: 'deleted' });
  t.equal((await call(app, 'DELETE', `/contacts/${made.id}`, { token: owner.token })).status, 200, 'deleting twice is fine');
  t.match((await call(app, 'GET', `/contacts/${made.id}`, { token: owner.token })).body.data, { status: 'deleted', email: 'del@example.com' });
  t.equal(await countRows(sql, 'list_members', owner.tenantId), 0, 'out of every list');
  const [count] = await sql<{ member_count: string }[]>`select member_count from lists where id = ${list!.id}`;
  t.equal(Number(count!.member_count), 0);
  t.same(emailsOf(await call(app, 'GET', '/contacts', { token: owner.token })), [], 'not listed by default');

  const back = await post(owner.token, { email: 'DEL@example.com', last_name: 'New' });
  t.equal(back.status, 201);
  t.match(back.body.data, { id: made.id, created: true, status: 'active', first_name: null, last_name: 'New', unsubscribed_at: null });
  t.equal(await countRows(sql, 'contacts', owner.tenantId), 1, 'the same row');
});

t.test('GET /contacts: status filter (default excludes deleted), q with % and _, paging, limits', async (t) => {
  const owner = await registerTenant(app);
  const made: Record<string, string> = {};
  for (const email of ['a_b@example.com', 'axb@example.com', 'pct%x@example.com', 'plain@example.com', 'gone@example.com', 'left@example.com']) {
    made[email] = (await contact(owner.token, { email })).id;
  }
  await call(app, 'PATCH', `/contacts/${made['left@example.com']}`, { token: owner.token, body: { status: 'unsubscribed' } });
  await call(app, 'DELETE', `/contacts/${made['gone@example.com']}`, { token: owner.token });

  const all = await call(app, 'GET', '/contacts', { token: owner.token });
  t.equal(all.status, 200);
  t.same(emailsOf(all), ['left@example.com', 'plain@example.com', 'pct%x@example.com', 'axb@example.com', 'a_b@example.com'], 'newest first, deleted excluded');
  t.match(all.body.data, { total: 5, total_is_capped: false, limit: 50, offset: 0 });
  const by = async (query: string) => call(app, 'GET', `/contacts?${query}`, { token: owner.token });
  t.same(emailsOf(await by('status=deleted')), ['gone@example.com']);
  t.same(emailsOf(await by('status=unsubscribed')), ['left@example.com']);
  t.equal((await by('status=active')).body.data.total, 4);
  t.equal((await by('status=all')).body.data.total, 6);
  t.same(emailsOf(await by('q=a_b')), ['a_b@example.com'], '_ is not a wildcard');
  t.same(emailsOf(await by(`q=${encodeURIComponent('t%x')}`)), ['pct%x@example.com'], '% is not a wildcard');
  t.same(emailsOf(await by('q=PLAIN@')), ['plain@example.com'], 'case-insensitive');
  const search = await by('q=example&status=all');
  t.match(search.body.data, { total: 6, total_is_capped: false });
  const page = await by('limit=2&offset=1');
  t.same(emailsOf(page), ['plain@example.com', 'pct%x@example.com']);
  t.match(page.body.data, { total: 5, limit: 2, offset: 1 });
  t.equal((await by('limit=201')).status, 422);
  t.equal((await by('limit=0')).status, 422);
  t.equal((await by('status=bounced')).status, 422);
});

t.test('totals at scale: read from the per-status counts; a search is counted up to the cap', async (t) => {
  const owner = await registerTenant(app);
  const n = SEARCH_COUNT_CAP + 500;
  await sql`
    insert into contacts (tenant_id, email, status, created_at, updated_at)
    select ${owner.tenantId}, 'bulk' || i || '@example.com', case when i % 10 = 0 then 'unsubscribed' when i % 25 = 1 then 'deleted' else 'active' end,
           now() - i * interval '1 second', now()
    from generate_series(1, ${n}) as i`;
  const expect = await sql<
    { status: string; n: number }[]
  >`select status, count(*)::int as n from contacts where tenant_id = ${owner.tenantId} group by status`;
  const of = (s: string) => expect.find((e) => e.status === s)?.n ?? 0;
  const res = await call(app, 'GET', '/contacts?limit=3', { token: owner.token });
  t.equal(res.body.data.total, of('active') + of('unsubscribed'));
  t.same(emailsOf(res), ['bulk2@example.com', 'bulk3@example.com', 'bulk4@example.com']);
  t.equal((await call(app, 'GET', '/contacts?status=all&limit=1', { token: owner.token })).body.data.total, n);
  t.equal((await call(app, 'GET', '/contacts?status=deleted&limit=1', { token: owner.token })).body.data.total, of('deleted'));

  // The total is the counts table's, not a count of rows.
  await sql`update contact_counts set n = n + 1000000 where tenant_id = ${owner.tenantId} and status = 'active'`;
  t.equal((await call(app, 'GET', '/contacts?status=active&limit=1', { token: owner.token })).body.data.total, of('active') + 1000000);
  await sql`update contact_counts set n = n - 1000000 where tenant_id = ${owner.tenantId} and status = 'active'`;

  const capped = await call(app, 'GET', '/contacts?q=bulk&status=all&limit=1', { token: owner.token });
  t.match(capped.body.data, { total: SEARCH_COUNT_CAP, total_is_capped: true });
  const exact = await call(app, 'GET', '/contacts?q=bulk1000&status=all', { token: owner.token });
  t.match(exact.body.data, { total: 11, total_is_capped: false }, 'bulk1000 and bulk10000..10009');
});

t.test('scopes: a contacts:read key reads but cannot write (403 invalid_scope)', async (t) => {
  const owner = await registerTenant(app);
  const made = await contact(owner.token, { email: 'scoped@example.com' });
  const reader = (await createKey(app, owner, { scopes: ['contacts:read'] })).key;
  const writer = (await createKey(app, owner, { scopes: ['contacts:write'] })).key;
  t.equal((await call(app, 'GET', '/contacts', { token: reader })).status, 200);
  t.equal((await call(app, 'GET', `/contacts/${made.id}`, { token: reader })).status, 200);
  for (const [method, url, body] of [
    ['POST', '/contacts', { email: 'x@example.com' }],
    ['PATCH', `/contacts/${made.id}`, { first_name: 'X' }],
    ['DELETE', `/contacts/${made.id}`, undefined],
    ['POST', `/contacts/${made.id}/erase`, undefined],
    ['POST', `/contacts/${made.id}/resubscribe`, { reason: 'x' }],
  ] as const) {
    const res = await call(app, method, url, { token: reader, ...(body ? { body } : {}) });
    t.equal(res.status, 403, `${method} ${url}`);
    t.equal(res.body.error, 'invalid_scope');
  }
  t.equal((await call(app, 'GET', '/contacts', { token: writer })).status, 403, 'writing does not grant reading');
  t.equal((await post(writer, { email: 'x@example.com' })).status, 201);
});

t.test("another tenant's contact is 404 on every id route and untouched", async (t) => {
  const { owner, other } = await twoTenants(app);
  const made = await contact(owner.token, { email: 'mine@example.com', first_name: 'Mine' });
  await assertForeign404(t, app, other.token, [
    { method: 'GET', url: `/contacts/${made.id}` },
    { method: 'PATCH', url: `/contacts/${made.id}`, body: { first_name: 'Stolen' } },
    { method: 'DELETE', url: `/contacts/${made.id}` },
    { method: 'POST', url: `/contacts/${made.id}/erase` },
    { method: 'POST', url: `/contacts/${made.id}/resubscribe`, body: { reason: 'stolen consent' } },
  ]);
  t.same((await call(app, 'GET', '/contacts', { token: other.token })).body.data.items, []);
  t.match((await call(app, 'GET', `/contacts/${made.id}`, { token: owner.token })).body.data, {
    email: 'mine@example.com',
    first_name: 'Mine',
    status: 'active',
  });
});

t.test('consent is not undone by accident: PATCH and upsert answer 409 naming the resubscribe action; nothing changes', async (t) => {
  const owner = await registerTenant(app);
  const made = await contact(owner.token, { email: 'gone@example.com', status: 'unsubscribed', first_name: 'Gone' });
  const patched = await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: { status: 'active', first_name: 'Back' } });
  t.equal(patched.status, 409);
  t.equal(patched.body.error, 'conflict');
  t.match(patched.body.message, `POST /contacts/${made.id}/resubscribe`);
  const upserted = await post(owner.token, { email: 'gone@example.com', status: 'active', first_name: 'Back' }, '?upsert=true');
  t.equal(upserted.status, 409, 'an upsert is no side door');
  t.match(upserted.body.message, `POST /contacts/${made.id}/resubscribe`);
  const now = (await call(app, 'GET', `/contacts/${made.id}`, { token: owner.token })).body.data;
  t.match(now, { status: 'unsubscribed', first_name: 'Gone', unsubscribed_at: made.unsubscribed_at }, 'neither write was applied');
  t.equal((await call(app, 'PATCH', `/contacts/${made.id}`, { token: owner.token, body: { first_name: 'Still' } })).status, 200, 'other changes still may');
  const actives = await contact(owner.token, { email: 'here@example.com' });
  t.equal((await call(app, 'PATCH', `/contacts/${actives.id}`, { token: owner.token, body: { status: 'active' } })).status, 200, 'active to active is fine');
  const audited = await sql`select 1 from audit_events where tenant_id = ${owner.tenantId} and action = 'contact.resubscribed'`;
  t.equal(audited.length, 0, 'nothing re-subscribed');
});

t.test('POST /contacts/{id}/resubscribe: needs a reason, sets active, audits actor, reason and previous status; only for unsubscribed', async (t) => {
  const owner = await registerTenant(app);
  const made = await contact(owner.token, { email: 'again@example.com', status: 'unsubscribed' });
  for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 'x'.repeat(501) }, { reason: 42 }]) {
    const res = await call(app, 'POST', `/contacts/${made.id}/resubscribe`, { token: owner.token, body });
    t.equal(res.status, 422, `reason ${JSON.stringify(body)}`);
    t.equal(res.body.error, 'validation_error');
  }
  const extra = await call(app, 'POST', `/contacts/${made.id}/resubscribe`, { token: owner.token, body: { reason: 'ok', status: 'active' } });
  t.equal(extra.status, 400, 'unexpected field');
  const key = await createKey(app, owner, { scopes: ['contacts:write'] });
  const res = await call(app, 'POST', `/contacts/${made.id}/resubscribe`, {
    token: key.key,
    body: { reason: '  Signed up again at the fair (form 2026-04)  ' },
  });
  t.equal(res.status, 200);
  t.match(res.body.data, { id: made.id, status: 'active', unsubscribed_at: null });
  const rows = await sql<{ actor_type: string; actor_id: string; resource_id: string; metadata: Record<string, unknown> }[]>`
    select actor_type, actor_id, resource_id, metadata from audit_events where tenant_id = ${owner.tenantId} and action = 'contact.resubscribed'`;
  t.equal(rows.length, 1);
  t.match(rows[0], {
    actor_type: 'api_key',
    actor_id: key.id,
    resource_id: made.id,
    metadata: { reason: 'Signed up again at the fair (form 2026-04)', previous_status: 'unsubscribed', unsubscribed_at: made.unsubscribed_at },
  });
  const again = await call(app, 'POST', `/contacts/${made.id}/resubscribe`, { token: owner.token, body: { reason: 'twice' } });
  t.equal(again.status, 409, 'an active contact is not re-subscribed');
  t.match(again.body.message, 'only an unsubscribed contact');
  await call(app, 'DELETE', `/contacts/${made.id}`, { token: owner.token });
  t.equal((await call(app, 'POST', `/contacts/${made.id}/resubscribe`, { token: owner.token, body: { reason: 'x' } })).status, 409, 'nor a deleted one');
  t.equal((await call(app, 'POST', '/contacts/not-an-id/resubscribe', { token: owner.token, body: { reason: 'x' } })).status, 404);
  const doc = (await call(app, 'GET', '/openapi.json')).body;
  t.ok(doc.paths['/contacts/{id}/resubscribe']?.post, 'in the OpenAPI document');
  t.match(doc.paths['/contacts/{id}/resubscribe'].post.description, 'Required scope for API keys: `contacts:write`');
});
