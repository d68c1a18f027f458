// Saved audit filters: save, list (own only), the 4 KB and 50-per-user limits (422), delete by the row's owner only, sessions only, tenant isolation.
import t from 'tap';
import { FILTER_MAX_BYTES, FILTERS_PER_USER } from '../../../shared/operations/audit/filters.js';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { assertForeign404 } from '../../helpers/isolation.js';
import { addMember } from '../../helpers/team.js';

const s = await buildTestApp(t);
const { app } = s;

const definition = { q: 'api_key', range: '7d', event_type: 'api_key.created', actor: 'owner@example.test', date_from: '2026-05-01', date_to: '2026-05-04' };

t.test('save and list: each user sees their own, newest first', async (t) => {
  const owner = await registerTenant(app);
  const viewer = await addMember(app, owner, 'viewer');
  const a = await call(app, 'POST', '/audit-filters', { token: owner.token, body: { name: 'Key changes', definition } });
  t.equal(a.status, 201);
  t.match(a.body.data, { id: String, name: 'Key changes', definition, created_at: String });
  const b = await call(app, 'POST', '/audit-filters', { token: viewer.token, body: { name: 'Mine', definition: { q: 'x' } } });
  t.equal(b.status, 201, 'a viewer may save filters too');
  const list = await call(app, 'GET', '/audit-filters', { token: owner.token });
  t.same(
    list.body.data.items.map((f: { name: string }) => f.name),
    ['Key changes'],
  );
  t.same(
    (await call(app, 'GET', '/audit-filters', { token: viewer.token })).body.data.items.map((f: { name: string }) => f.name),
    ['Mine'],
  );
});

t.test('validation: name and definition required, unknown definition fields refused', async (t) => {
  const owner = await registerTenant(app);
  t.equal((await call(app, 'POST', '/audit-filters', { token: owner.token, body: { name: 'x' } })).status, 422);
  t.equal((await call(app, 'POST', '/audit-filters', { token: owner.token, body: { definition } })).status, 422);
  t.equal((await call(app, 'POST', '/audit-filters', { token: owner.token, body: { name: 'x', definition: { nope: 1 } } })).status, 400, 'an unexpected field');
});

t.test('at most 4 KB per filter: 422 beyond', async (t) => {
  const owner = await registerTenant(app);
  const name = 'big';
  // {"q":"…"} is 8 bytes of JSON around the text.
  const fits = 'a'.repeat(FILTER_MAX_BYTES - name.length - 8);
  const ok = await call(app, 'POST', '/audit-filters', { token: owner.token, body: { name, definition: { q: fits } } });
  t.equal(ok.status, 201, 'exactly 4096 bytes is accepted');
  const over = await call(app, 'POST', '/audit-filters', { token: owner.token, body: { name, definition: { q: `${fits}é` } } });
  t.equal(over.status, 422, 'one character (two bytes) more is refused');
  t.equal(over.body.error, 'validation_error');
  t.match(over.body.message, /4096 bytes/);
});

t.test('at most 50 per user: the 51st is 422, concurrent saves included; another user is not counted', async (t) => {
  const owner = await registerTenant(app);
  const admin = await addMember(app, owner, 'admin');
  const results = await Promise.all(
    Array.from({ length: FILTERS_PER_USER + 5 }, (_, i) =>
      call(app, 'POST', '/audit-filters', { token: owner.token, body: { name: `f${i}`, definition: { q: `${i}` } } }),
    ),
  );
  t.equal(results.filter((r) => r.status === 201).length, FILTERS_PER_USER, 'exactly 50 saved');
  t.ok(
    results.filter((r) => r.status !== 201).every((r) => r.status === 422 && /at most 50/.test(r.body.message)),
    'the rest are 422',
  );
  t.equal((await call(app, 'GET', '/audit-filters', { token: owner.token })).body.data.items.length, FILTERS_PER_USER);
  t.equal((await call(app, 'POST', '/audit-filters', { token: admin.token, body: { name: 'other user', definition } })).status, 201);
  const first = (await call(app, 'GET', '/audit-filters', { token: owner.token })).body.data.items[0];
  t.equal((await call(app, 'DELETE', `/audit-filters/${first.id}`, { token: owner.token })).status, 200);
  t.equal(
    (await call(app, 'POST', '/audit-filters', { token: owner.token, body: { name: 'after delete', definition } })).status,
    201,
    'room again after a delete',
  );
});

t.test('delete: only the row owner; a teammate (even the owner role) is 403; another tenant 404; sessions only', async (t) => {
  const owner = await registerTenant(app);
  const dev = await addMember(app, owner, 'developer');
  const other = await registerTenant(app);
  const mine = (await call(app, 'POST', '/audit-filters', { token: dev.token, body: { name: 'dev filter', definition } })).body.data;
  const byOwner = await call(app, 'DELETE', `/audit-filters/${mine.id}`, { token: owner.token });
  t.equal(byOwner.status, 403);
  t.equal(byOwner.body.error, 'forbidden');
  await assertForeign404(t, app, other.token, [{ method: 'DELETE', url: `/audit-filters/${mine.id}` }]);
  const key = await createKey(app, owner);
  t.equal((await call(app, 'GET', '/audit-filters', { token: key.key })).status, 403, 'an API key has no user to own filters');
  const gone = await call(app, 'DELETE', `/audit-filters/${mine.id}`, { token: dev.token });
  t.equal(gone.status, 200);
  t.same(gone.body.data, { status: 'deleted' });
  t.equal((await call(app, 'DELETE', `/audit-filters/${mine.id}`, { token: dev.token })).status, 404, 'already deleted');
  t.equal((await call(app, 'DELETE', '/audit-filters/not-a-uuid', { token: dev.token })).status, 404);
});
