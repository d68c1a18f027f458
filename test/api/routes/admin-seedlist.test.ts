// Super-admin seed mailboxes over HTTP: super-admin only, create with its 409 and 422s, bulk (limits, duplicates, invalid rows never fatal, one statement),
// PATCH validation, DELETE, hits paging; every change audited.
import t from 'tap';
import { buildTestApp, call, registerTenant, superAdminToken } from '../../helpers/app.js';

async function setup(t: { teardown(fn: () => unknown): void }) {
  const built = await buildTestApp(t);
  const admin = await superAdminToken(built.app);
  const tenant = await registerTenant(built.app);
  return { ...built, admin, tenant };
}

const ID = '00000000-0000-4000-8000-000000000000';
const ROUTES: [string, string, unknown?][] = [
  ['GET', '/admin/seedlist'],
  ['POST', '/admin/seedlist', { email: 'seed@gmail.com', provider: 'gmail' }],
  ['POST', '/admin/seedlist/bulk', { rows: [{ email: 'seed@gmail.com', provider: 'gmail' }] }],
  ['PATCH', `/admin/seedlist/${ID}`, { active: false }],
  ['DELETE', `/admin/seedlist/${ID}`],
  ['GET', `/admin/seedlist/${ID}/hits`],
];

t.test('every route is super-admin only (401 without a credential, 403 for a tenant owner) and documented', async (t) => {
  const s = await setup(t);
  for (const [method, url, body] of ROUTES) {
    t.equal((await call(s.app, method as 'GET', url, { body })).status, 401, `${method} ${url} without a token`);
    t.equal((await call(s.app, method as 'GET', url, { token: s.tenant.token, body })).status, 403, `${method} ${url} as a tenant`);
  }
  t.equal((await s.sql`select count(*)::int as n from seed_mailboxes`)[0]!['n'], 0, 'a refused request changed nothing');
  const doc = await call(s.app, 'GET', '/openapi.json');
  for (const [method, url] of ROUTES) {
    const path = url.replace(ID, '{id}');
    t.ok(doc.body.paths[path]?.[method.toLowerCase()]?.description, `${method} ${path} is documented`);
  }
});

t.test('create, list, patch, delete: validation, the duplicate 409, audit rows', async (t) => {
  const s = await setup(t);
  const post = (body: unknown) => call(s.app, 'POST', '/admin/seedlist', { token: s.admin, body });
  const created = await post({ email: ' Seed.One@Gmail.COM ', provider: 'gmail', label: 'Gmail #1' });
  t.equal(created.status, 200, JSON.stringify(created.body));
  t.match(created.body.data, { email: 'seed.one@gmail.com', provider: 'gmail', label: 'Gmail #1', active: true, bounce_mailbox_id: null });
  const id = created.body.data.id;

  const dup = await post({ email: 'seed.one@gmail.com', provider: 'outlook' });
  t.equal(dup.status, 409);
  t.equal(dup.body.error, 'conflict', "the spec's slug for a duplicate seed email");
  t.equal((await post({ email: 'not an address', provider: 'gmail' })).status, 422);
  t.equal((await post({ email: 'a@b.example', provider: 'hotmail' })).status, 422, "provider from the spec's list");
  t.equal((await post({ email: 'a@b.example' })).status, 422, 'provider required');
  t.equal((await post({ email: 'a@b.example', provider: 'custom', bounce_mailbox_id: ID })).status, 422, 'an unknown bounce mailbox');
  t.equal((await post({ email: 'a@b.example', provider: 'custom', surprise: 1 })).status, 400, 'unexpected field');
  t.equal((await post({ email: 'a@b.example', provider: 'custom', label: 'nul\u0000' })).status, 422, 'a control character in the label');
  t.equal((await post({ email: 'seed@proton.me', provider: 'proton' })).status, 200);

  const list = await call(s.app, 'GET', '/admin/seedlist', { token: s.admin });
  t.equal(list.body.data.total, 2);
  t.same(
    list.body.data.items.map((i: { email: string }) => i.email),
    ['seed.one@gmail.com', 'seed@proton.me'],
  );

  const patch = (body: unknown, seedId = id) => call(s.app, 'PATCH', `/admin/seedlist/${seedId}`, { token: s.admin, body });
  const none = await patch({});
  t.equal(none.status, 422, 'PATCH needs label or active');
  t.equal(none.body.error, 'validation_error');
  t.equal((await patch({ email: 'x@y.example' })).status, 400, 'email is immutable');
  t.equal((await patch({ provider: 'yahoo' })).status, 400, 'provider is immutable');
  t.equal((await patch({ active: 'no' })).status, 422);
  t.match((await patch({ active: false })).body.data, { active: false, label: 'Gmail #1' });
  t.match((await patch({ label: 'renamed', active: true })).body.data, { active: true, label: 'renamed' });
  t.match((await patch({ label: null })).body.data, { label: null });
  t.equal((await patch({ active: true }, ID)).status, 404);
  t.equal((await patch({ active: true }, 'nope')).status, 404);

  const del = await call(s.app, 'DELETE', `/admin/seedlist/${id}`, { token: s.admin });
  t.same(del.body.data, { status: 'deleted' });
  t.equal((await call(s.app, 'DELETE', `/admin/seedlist/${id}`, { token: s.admin })).status, 404);
  t.equal((await call(s.app, 'GET', `/admin/seedlist/${id}/hits`, { token: s.admin })).status, 404);

  const audits = await s.sql`select action, actor_type, tenant_id, resource_id, metadata from audit_events where action like 'seedlist.%' order by id`;
  t.same(
    audits.map((a) => a['action']),
    ['seedlist.create', 'seedlist.create', 'seedlist.update', 'seedlist.update', 'seedlist.update', 'seedlist.delete'],
  );
  t.match(audits[0], { actor_type: 'user', tenant_id: null, resource_id: id, metadata: { email: 'seed.one@gmail.com', provider: 'gmail' } });
  t.match(audits[2], { metadata: { before: { active: true }, after: { active: false } } });
});

t.test('bulk: at most 500 rows, per-row results, duplicates and invalid rows never abort the batch, one audit row', async (t) => {
  const s = await setup(t);
  const bulk = (rows: unknown) => call(s.app, 'POST', '/admin/seedlist/bulk', { token: s.admin, body: { rows } });
  await call(s.app, 'POST', '/admin/seedlist', { token: s.admin, body: { email: 'old@yahoo.com', provider: 'yahoo' } });

  const tooMany = await bulk(Array.from({ length: 501 }, (_, i) => ({ email: `s${i}@gmail.com`, provider: 'gmail' })));
  t.equal(tooMany.status, 422, 'more than 500 rows');
  t.equal((await bulk([])).status, 422, 'no rows');

  const res = await bulk([
    { email: 'new1@gmail.com', provider: 'gmail', label: 'a' },
    { email: 'OLD@yahoo.com', provider: 'yahoo' },
    { email: 'broken', provider: 'gmail' },
    { email: 'new2@outlook.com', provider: 'nope' },
    { email: 'new1@gmail.com', provider: 'gmail' },
    'not an object',
    { email: 'new3@icloud.com', provider: 'icloud', extra: true },
    { email: 'new4@icloud.com', provider: 'icloud' },
    { email: 'new5@icloud.com', provider: 'icloud', label: 'bell\u0007' },
    { email: 'new6@icloud.com', provider: 'icloud', bounce_mailbox_id: ID },
  ]);
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.match(res.body.data, { inserted: 2, duplicates: 2, invalid: 6 });
  t.same(
    res.body.data.results.map((r: { status: string }) => r.status),
    ['inserted', 'duplicate', 'invalid', 'invalid', 'duplicate', 'invalid', 'invalid', 'inserted', 'invalid', 'invalid'],
  );
  t.match(res.body.data.results[2], { index: 2, email: 'broken', error: /local@domain/ });
  t.match(res.body.data.results[3], { error: /provider/ });
  t.match(res.body.data.results[6], { error: /unexpected field extra/ });

  const list = await call(s.app, 'GET', '/admin/seedlist', { token: s.admin });
  t.equal(list.body.data.total, 3);

  const full = await bulk(Array.from({ length: 500 }, (_, i) => ({ email: `s${i}@gmail.com`, provider: 'gmail' })));
  t.match(full.body.data, { inserted: 500, duplicates: 0, invalid: 0 }, '500 rows are fine');

  const audits = await s.sql`select metadata from audit_events where action = 'seedlist.bulk_create' order by id`;
  t.equal(audits.length, 2, 'one audit row per batch');
  t.match(audits[0]!['metadata'], { rows: 10, inserted: 2, duplicates: 2, invalid: 6 });
  t.match(res.body.data.results[9], { error: /bounce_mailbox_id/ });
});

t.test('hits: limit 1..200 default 25, offset; expected versus observed placement, missing after the window', async (t) => {
  const s = await setup(t);
  const created = await call(s.app, 'POST', '/admin/seedlist', { token: s.admin, body: { email: 'watch@gmail.com', provider: 'gmail' } });
  const seedId = created.body.data.id;
  const [campaign] = await s.sql`
    insert into campaigns (tenant_id, name, status, created_at, updated_at) values (${s.tenant.tenantId}, 'Launch', 'sent', now(), now()) returning id`;
  const hours = (h: number) => new Date(Date.now() - h * 3_600_000);
  // Thirty campaigns' worth of copies is more than one default page: made directly, as the fan-out would.
  for (let i = 0; i < 30; i++) {
    const [c] =
      i === 0
        ? [campaign!]
        : await s.sql`insert into campaigns (tenant_id, name, status, created_at, updated_at)
                      values (${s.tenant.tenantId}, ${`C${i}`}, 'sent', now(), now()) returning id`;
    await s.sql`insert into seed_hits (seed_id, campaign_id, tenant_id, email, send_id, send_state, created_at)
                values (${seedId}, ${c!['id']}, ${s.tenant.tenantId}, 'watch@gmail.com', gen_random_uuid(), 'pending', ${hours(30 - i)})`;
  }
  const page = (q: string) => call(s.app, 'GET', `/admin/seedlist/${seedId}/hits${q}`, { token: s.admin });
  const first = await page('');
  t.equal(first.status, 200);
  t.equal(first.body.data.items.length, 25, 'default 25');
  t.equal(first.body.data.total, 30);
  t.equal((await page('?limit=200&offset=20')).body.data.items.length, 10);
  t.equal((await page('?limit=0')).status, 422);
  t.equal((await page('?limit=201')).status, 422);
  const oldest = (await page('?offset=29')).body.data.items[0];
  t.equal(oldest.campaign_name, 'Launch');
  t.match(oldest, { expected: 'inbox', observed: 'pending', send_status: null }, 'not handed to the send path yet');

  // Sent 30 hours ago and never seen: missing (24 h window); another seen in spam.
  const [hit] = await s.sql`select id from seed_hits where campaign_id = ${campaign!['id']}`;
  await s.sql`update seed_hits set send_state = 'sent', sent_at = ${hours(30)} where id = ${hit!['id']}`;
  await s.sql`
    insert into sends (id, tenant_id, source, mode, status, from_email, to_email, subject, message_id, envelope_from, created_at, updated_at)
    select send_id, tenant_id, 'campaign', 'live', 'delivered', 'news@x.example', email, 'Hi', send_id::text, 'b@x.example', now(), now() from seed_hits
    where id = ${hit!['id']}`;
  t.match((await page('?offset=29')).body.data.items[0], { expected: 'inbox', observed: 'missing', send_status: 'delivered' });
  await s.sql`update seed_hits set placement = 'spam', placement_source = 'mx', observed_at = now() where id = ${hit!['id']}`;
  t.match((await page('?offset=29')).body.data.items[0], { expected: 'inbox', observed: 'spam', observed_source: 'mx' });
});
