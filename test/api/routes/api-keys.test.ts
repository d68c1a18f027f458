// API keys: create (shown once, stored hashed), list, revoke, scope changes, scope enforcement, last-used tracking, audit.
import { createHash } from 'node:crypto';
import t from 'tap';
import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import { defineRoute } from '../../../api/route.js';
import { chainAndVerify } from '../../../shared/operations/audit/appender.js';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { SCOPES } from '../../../shared/accounts/keys/scopes.js';
import { buildTestApp, call, countRows, createKey, registerTenant } from '../../helpers/app.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';

/** No current route needs a scope, so tests add one (before the app's first request readies it). */
function addScopedRoute(app: FastifyInstance): void {
  defineRoute(app, {
    method: 'GET',
    url: '/api/v1/test-scope',
    auth: 'any',
    scope: 'domains:read',
    tags: ['Test'],
    summary: 'Scope probe',
    description: 'Needs domains:read when called with an API key.',
    response: z.object({ reached: z.boolean() }),
    handler: async () => ({ reached: true }),
  });
}

t.test('create returns the key once and stores only its SHA-256 hash', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const owner = await registerTenant(app);

  const res = await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'CI deploys', scopes: ['contacts:read', 'transactional:send'] } });
  t.equal(res.status, 201);
  t.equal(res.body.ok, true);
  const created = res.body.data;
  t.match(created, { id: String, key: String, name: 'CI deploys', prefix: String, mode: 'live' });
  t.same(created.scopes, ['contacts:read', 'transactional:send']);
  t.ok(created.key.startsWith('mp_live_'), 'live key prefix');
  t.ok(created.key.startsWith(created.prefix), 'the prefix is the start of the key');
  t.ok(created.prefix.length < created.key.length - 20, 'the prefix does not reveal the secret');

  const [row] = await sql`select * from api_keys where id = ${created.id}`;
  t.equal(row!.key_hash, createHash('sha256').update(created.key).digest('hex'), 'key_hash = sha256(key)');
  t.equal(row!.tenant_id, owner.tenantId);
  t.equal(row!.created_by_user_id, owner.userId);
  const secretPart = created.key.slice(created.prefix.length);
  const dump = (await sql<{ t: string }[]>`select k::text as t from api_keys k`).map((r) => r.t).join('|');
  t.notOk(dump.includes(created.key), 'the plaintext key is nowhere in api_keys');
  t.notOk(dump.includes(secretPart), 'not even the secret part after the prefix');
  const audit = (await sql<{ t: string }[]>`select a::text as t from audit_events a`).map((r) => r.t).join('|');
  t.notOk(audit.includes(secretPart), 'nor in the audit log');

  const list = await call(app, 'GET', '/api-keys', { token: owner.token });
  t.equal(list.status, 200);
  t.equal(list.body.data.items.length, 1);
  const item = list.body.data.items[0];
  t.same(Object.keys(item).sort(), ['created_at', 'id', 'last_used_at', 'mode', 'name', 'prefix', 'scopes']);
  t.match(item, { id: created.id, name: 'CI deploys', prefix: created.prefix, mode: 'live', last_used_at: null });
  t.same(item.scopes, ['contacts:read', 'transactional:send']);
  t.notOk(JSON.stringify(list.body).includes(secretPart), 'the list never shows the key');
});

t.test('mode chooses the prefix; scopes are checked against the full list', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const owner = await registerTenant(app);

  const test = await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'sandbox', mode: 'test' } });
  t.equal(test.status, 201);
  t.ok(test.body.data.key.startsWith('mp_test_'), 'test key prefix');
  t.equal(test.body.data.mode, 'test');
  t.same(test.body.data.scopes, [], 'omitted scopes = all (empty list)');

  const empty = await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'all', scopes: [] } });
  t.same(empty.body.data.scopes, []);

  const every = await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'every scope', scopes: [...SCOPES] } });
  t.equal(every.status, 201, 'every catalogue scope (incl. transactional:send, suppressions:read, audit:export) is accepted');
  t.same(every.body.data.scopes, [...SCOPES].sort());

  const dup = await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'dup', scopes: ['lists:read', 'lists:read'] } });
  t.same(dup.body.data.scopes, ['lists:read'], 'duplicates collapse');

  const before = await countRows(sql, 'api_keys');
  const bad = await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'bad', scopes: ['contacts:read', 'contacts:delete'] } });
  t.equal(bad.status, 400);
  t.equal(bad.body.error, 'bad_request');
  t.match(bad.body.message, /contacts:delete/);
  const missing = await call(app, 'POST', '/api-keys', { token: owner.token, body: { scopes: [] } });
  t.equal(missing.status, 422);
  t.match(missing.body.message, /^name/);
  const after = await countRows(sql, 'api_keys');
  t.equal(after, before, 'failed creations write nothing');

  const who = await call(app, 'GET', '/whoami', { token: test.body.data.key });
  t.equal(who.body.data.key.mode, 'test');
});

t.test('revoke: the key stops working at once and leaves the list', async (t) => {
  const { app } = await buildTestApp(t);
  const owner = await registerTenant(app);
  const keep = await createKey(app, owner, { name: 'keep' });
  const gone = await createKey(app, owner, { name: 'gone' });
  t.equal((await call(app, 'GET', '/whoami', { token: gone.key })).status, 200, 'works before revocation (and is cached)');

  const del = await call(app, 'DELETE', `/api-keys/${gone.id}`, { token: owner.token });
  t.equal(del.status, 200);
  t.same(del.body, { ok: true, data: { status: 'revoked' } });

  const after = await call(app, 'GET', '/whoami', { token: gone.key });
  t.equal(after.status, 401, 'a revoked key gets 401');
  t.equal(after.body.error, 'unauthenticated');
  t.equal((await call(app, 'GET', '/whoami', { token: keep.key })).status, 200, 'other keys keep working');

  const list = await call(app, 'GET', '/api-keys', { token: owner.token });
  t.same(
    list.body.data.items.map((k: { id: string }) => k.id),
    [keep.id],
    'revoked keys are not listed',
  );

  const again = await call(app, 'DELETE', `/api-keys/${gone.id}`, { token: owner.token });
  t.equal(again.status, 404, 'revoking twice is 404');
  t.equal(again.body.error, 'not_found');
  const patch = await call(app, 'PATCH', `/api-keys/${gone.id}/scopes`, { token: owner.token, body: { scopes: [] } });
  t.equal(patch.status, 404, 'a revoked key has no scopes to change');
  t.equal((await call(app, 'DELETE', '/api-keys/00000000-0000-4000-8000-000000000000', { token: owner.token })).status, 404);
  t.equal((await call(app, 'DELETE', '/api-keys/not-a-uuid', { token: owner.token })).status, 404);
});

t.test('scopes: every scoped route checks them; changes apply without reissuing', async (t) => {
  const { app } = await buildTestApp(t);
  addScopedRoute(app);
  const owner = await registerTenant(app);
  const narrow = await createKey(app, owner, { name: 'narrow', scopes: ['contacts:read'] });
  const domains = await createKey(app, owner, { name: 'domains', scopes: ['domains:read', 'contacts:read'] });
  const all = await createKey(app, owner, { name: 'all' });

  const denied = await call(app, 'GET', '/test-scope', { token: narrow.key });
  t.equal(denied.status, 403);
  t.equal(denied.body.error, 'invalid_scope');
  t.match(denied.body.message, /domains:read/, 'names the missing scope');
  t.same((await call(app, 'GET', '/test-scope', { token: domains.key })).body, { ok: true, data: { reached: true } }, 'a key with the scope passes');
  t.equal((await call(app, 'GET', '/test-scope', { token: all.key })).status, 200, 'a key with no scopes has all access');
  t.equal((await call(app, 'GET', '/test-scope', { token: owner.token })).status, 200, 'a user session is not scope-limited');
  t.equal((await call(app, 'GET', '/whoami', { token: narrow.key })).status, 200, 'an unscoped route takes any key');

  const grant = await call(app, 'PATCH', `/api-keys/${narrow.id}/scopes`, { token: owner.token, body: { scopes: ['domains:read'] } });
  t.equal(grant.status, 200);
  t.same(grant.body.data, { id: narrow.id, scopes: ['domains:read'] });
  t.equal((await call(app, 'GET', '/test-scope', { token: narrow.key })).status, 200, 'the new scope applies at once');

  const restrict = await call(app, 'PATCH', `/api-keys/${all.id}/scopes`, { token: owner.token, body: { scopes: ['events:read'] } });
  t.same(restrict.body.data.scopes, ['events:read']);
  t.equal((await call(app, 'GET', '/test-scope', { token: all.key })).body.error, 'invalid_scope', 'a narrowed key loses access at once');

  const reset = await call(app, 'PATCH', `/api-keys/${all.id}/scopes`, { token: owner.token, body: { scopes: [] } });
  t.same(reset.body.data.scopes, [], 'an empty list resets to all');
  t.equal((await call(app, 'GET', '/test-scope', { token: all.key })).status, 200);

  const invalid = await call(app, 'PATCH', `/api-keys/${all.id}/scopes`, { token: owner.token, body: { scopes: ['domains:read', 'root'] } });
  t.equal(invalid.status, 400);
  t.equal(invalid.body.error, 'bad_request');
  const unknown = await call(app, 'PATCH', '/api-keys/00000000-0000-4000-8000-000000000000/scopes', { token: owner.token, body: { scopes: [] } });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error, 'not_found');
  const list = await call(app, 'GET', '/api-keys', { token: owner.token });
  t.same(list.body.data.items.find((k: { id: string }) => k.id === all.id).scopes, [], 'the failed change left the scopes alone');
});

t.test('key management needs a user session: API keys get 403 forbidden', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const owner = await registerTenant(app);
  const key = await createKey(app, owner, { name: 'full access' });
  const activeKeys = async () => (await sql`select id from api_keys where revoked_at is null`).length;
  const before = await activeKeys();
  const requests: [string, 'GET' | 'POST' | 'PATCH' | 'DELETE', unknown][] = [
    ['/api-keys', 'GET', undefined],
    ['/api-keys', 'POST', { name: 'minted by a key' }],
    [`/api-keys/${key.id}/scopes`, 'PATCH', { scopes: ['contacts:read'] }],
    [`/api-keys/${key.id}`, 'DELETE', undefined],
  ];
  for (const [url, method, body] of requests) {
    const res = await call(app, method, url, { token: key.key, ...(body ? { body } : {}) });
    t.equal(res.status, 403, `${method} ${url} with an API key → 403`);
    t.equal(res.body.error, 'forbidden');
  }
  const after = await activeKeys();
  t.equal(after, before, 'nothing created or revoked');
  const [row] = await sql`select scopes from api_keys where id = ${key.id}`;
  t.same(row!.scopes, [], 'scopes unchanged');
  for (const [url, method] of requests) {
    t.equal((await call(app, method, url)).status, 401, `${method} ${url} without a credential → 401`);
  }
});

t.test("another tenant's keys are 404 and keep working", async (t) => {
  const { app } = await buildTestApp(t);
  const { owner, other } = await twoTenants(app);
  const key = await createKey(app, owner, { name: 'owner key', scopes: ['contacts:read'] });
  // The helper's Assert takes `message?: string`, which tap's overloads do not match; adapt.
  const assert = { equal: (a: unknown, b: unknown, m?: string) => t.equal(a, b, m ?? '') };
  await assertForeign404(assert, app, other.token, [
    { method: 'DELETE', url: `/api-keys/${key.id}` },
    { method: 'PATCH', url: `/api-keys/${key.id}/scopes`, body: { scopes: [] } },
  ]);
  const otherList = await call(app, 'GET', '/api-keys', { token: other.token });
  t.same(otherList.body.data.items, [], "the other tenant's list does not show it");
  const who = await call(app, 'GET', '/whoami', { token: key.key });
  t.equal(who.status, 200, 'the key still works');
  t.same(who.body.data.key.scopes, ['contacts:read'], 'with its scopes unchanged');
  t.equal(who.body.data.tenant.id, owner.tenantId);
});

t.test('last_used_at is recorded without a write per request', async (t) => {
  const clock = new ManualClock(new Date());
  const { app, sql, ctx } = await buildTestApp(t, { clock });
  const owner = await registerTenant(app);
  const key = await createKey(app, owner);
  const lastUsed = async () => {
    const [row] = await sql`select last_used_at, last_used_ip from api_keys where id = ${key.id}`;
    return row as { last_used_at: Date | null; last_used_ip: string | null };
  };
  t.equal((await lastUsed()).last_used_at, null, 'unused key');

  const first = clock.now();
  for (let i = 0; i < 25; i++) {
    t.equal((await call(app, 'GET', '/whoami', { token: key.key })).status, 200);
    clock.advance(1000);
  }
  await ctx.keyUsage.flush();
  const afterBurst = await lastUsed();
  t.equal(afterBurst.last_used_at?.getTime(), first.getTime(), 'one write, for the first use of the interval');
  t.equal(afterBurst.last_used_ip, '127.0.0.1');

  // Still within 60 s of that write: more uses do not write.
  clock.set(new Date(first.getTime() + 59_000));
  for (let i = 0; i < 5; i++) await call(app, 'GET', '/whoami', { token: key.key });
  await ctx.keyUsage.flush();
  t.equal((await lastUsed()).last_used_at?.getTime(), first.getTime(), 'unchanged within the interval');

  clock.set(new Date(first.getTime() + 61_000));
  await call(app, 'GET', '/whoami', { token: key.key });
  await ctx.keyUsage.flush();
  t.equal((await lastUsed()).last_used_at?.getTime(), first.getTime() + 61_000, 'written again after the interval');

  const list = await call(app, 'GET', '/api-keys', { token: owner.token });
  t.equal(list.body.data.items[0].last_used_at, new Date(first.getTime() + 61_000).toISOString(), 'shown in the key list');
});

t.test('create, revoke and scope changes are audited on an intact hash chain', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const owner = await registerTenant(app);
  const key = await createKey(app, owner, { name: 'audited', scopes: ['lists:read'] });
  await call(app, 'PATCH', `/api-keys/${key.id}/scopes`, { token: owner.token, body: { scopes: ['lists:write', 'lists:read'] } });
  await call(app, 'DELETE', `/api-keys/${key.id}`, { token: owner.token });

  const rows = await sql`
    select tenant_id, actor_type, actor_id, action, resource_type, resource_id, metadata, ip
    from audit_events where resource_type = 'api_key' order by id`;
  t.same(
    rows.map((r) => r.action),
    ['api_key.created', 'api_key.scopes_changed', 'api_key.revoked'],
  );
  for (const r of rows) {
    t.match(
      r,
      { tenant_id: owner.tenantId, actor_type: 'user', actor_id: owner.userId, resource_id: key.id, ip: '127.0.0.1' },
      `${r.action} names tenant and actor`,
    );
  }
  t.match(rows[0]!.metadata, { name: 'audited', mode: 'live', scopes: ['lists:read'] });
  t.same(rows[1]!.metadata, { before: ['lists:read'], after: ['lists:read', 'lists:write'] });
  t.match(rows[2]!.metadata, { name: 'audited' });
  t.same(await chainAndVerify(sql).then((v) => ({ intact: v.intact, brokenAt: v.brokenAt })), { intact: true, brokenAt: null });

  // Failed changes write no audit row.
  const before = await countRows(sql, 'audit_events');
  await call(app, 'DELETE', `/api-keys/${key.id}`, { token: owner.token });
  await call(app, 'PATCH', `/api-keys/${key.id}/scopes`, { token: owner.token, body: { scopes: [] } });
  await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'x', scopes: ['bogus'] } });
  const after = await countRows(sql, 'audit_events');
  t.equal(after, before);
});

t.test('20 parallel key creations keep the audit chain intact', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const owner = await registerTenant(app);
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => call(app, 'POST', '/api-keys', { token: owner.token, body: { name: `parallel ${i}` } })),
  );
  t.same(
    results.map((r) => r.status),
    Array(20).fill(201),
  );
  t.equal(new Set(results.map((r) => r.body.data.key)).size, 20, 'distinct keys');
  const created = await sql`select id from audit_events where action = 'api_key.created'`;
  t.equal(created.length, 20);
  const verdict = await chainAndVerify(sql);
  t.equal(verdict.intact, true);
  t.equal(verdict.brokenAt, null);
  t.ok(verdict.rows >= 22, 'bootstrap, registration and 20 creations');
});
