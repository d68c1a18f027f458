// The per-process credential cache the guard answers most requests from: what changes in this process applies at once, what another process changes applies
// within credential_cache_ms.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant, superAdminToken } from '../../../helpers/app.js';

// Short, so the cross-process bound is observable in a test; production's is config/auth.yaml's (5 s).
const CACHE_MS = 1000;
const { app, sql } = await buildTestApp(t, { env: { MAILPATH_CONFIG__AUTH__CREDENTIAL_CACHE_MS: String(CACHE_MS) } });
const whoami = (key: string) => call(app, 'GET', '/whoami', { token: key });

t.test('revoked in this process: refused at once, though the key was cached', async (t) => {
  const owner = await registerTenant(app);
  const key = await createKey(app, owner);
  t.equal((await whoami(key.key)).status, 200, 'cached now');
  t.equal((await call(app, 'DELETE', `/api-keys/${key.id}`, { token: owner.token })).status, 200);
  const res = await whoami(key.key);
  t.equal(res.status, 401, 'the very next request is refused');
  t.equal(res.body.error, 'unauthenticated');
});

t.test('scopes narrowed in this process: the next request is checked against the new scopes', async (t) => {
  const owner = await registerTenant(app);
  const key = await createKey(app, owner);
  t.equal((await call(app, 'GET', '/api-keys', { token: key.key })).status, 403, 'api-keys is a user route anyway');
  t.equal((await call(app, 'GET', '/contacts', { token: key.key })).status, 200, 'every scope: contacts readable (and the key cached)');
  t.equal((await call(app, 'PATCH', `/api-keys/${key.id}/scopes`, { token: owner.token, body: { scopes: ['lists:read'] } })).status, 200);
  const res = await call(app, 'GET', '/contacts', { token: key.key });
  t.equal(res.status, 403);
  t.equal(res.body.error, 'invalid_scope');
});

t.test('revoked or deleted by another process: refused once the cached copy expires (credential_cache_ms)', async (t) => {
  const owner = await registerTenant(app);
  const revoked = await createKey(app, owner, { name: 'revoked elsewhere' });
  const deleted = await createKey(app, owner, { name: 'deleted elsewhere' });
  t.equal((await whoami(revoked.key)).status, 200);
  t.equal((await whoami(deleted.key)).status, 200);
  // What another process's revocation and a deletion write; this process hears of neither.
  await sql`update api_keys set revoked_at = now() where id = ${revoked.id}`;
  await sql`delete from api_key_activity where key_id = ${deleted.id}`;
  await sql`delete from api_keys where id = ${deleted.id}`;
  await sleep(CACHE_MS + 100);
  for (const [label, key] of [
    ['revoked', revoked.key],
    ['deleted', deleted.key],
  ] as const) {
    const res = await whoami(key);
    t.equal(res.status, 401, `${label} → 401 within the bound`);
    t.equal(res.body.error, 'unauthenticated');
  }
});

t.test('suspended in this process: a cached key sees it at once; in another, within the bound', async (t) => {
  const admin = await superAdminToken(app);
  const owner = await registerTenant(app);
  const key = await createKey(app, owner);
  t.equal((await whoami(key.key)).body.data.tenant.status, 'active', 'cached as active');

  t.equal((await call(app, 'POST', `/admin/tenants/${owner.tenantId}/suspend`, { token: admin, body: { reason: 'abuse' } })).status, 200);
  // The principal's tenant is what the send path's suspended gate reads (test/scenarios/api/suspension.test.ts sends).
  t.equal((await whoami(key.key)).body.data.tenant.status, 'suspended', 'this process forgot the cached tenant');

  t.equal((await call(app, 'POST', `/admin/tenants/${owner.tenantId}/unsuspend`, { token: admin })).status, 200);
  t.equal((await whoami(key.key)).body.data.tenant.status, 'active');
  // Another process suspends it: this one's cached copy says active until it expires, never longer.
  await sql`update tenants set status = 'suspended' where id = ${owner.tenantId}`;
  await sleep(CACHE_MS + 100);
  t.equal((await whoami(key.key)).body.data.tenant.status, 'suspended', 'seen within the bound');
});

t.test('a cached principal is shared by requests, so it is frozen: no route can alter what the next request sees', async (t) => {
  const owner = await registerTenant(app);
  const key = await createKey(app, owner, { scopes: ['contacts:read'] });
  await whoami(key.key);
  const principal = app.ctx.credentials.cachedKey(key.key);
  t.ok(principal, 'cached');
  t.ok(Object.isFrozen(principal) && Object.isFrozen(principal!.tenant) && Object.isFrozen(principal!.key) && Object.isFrozen(principal!.scopes));
  t.throws(() => (principal!.scopes as string[]).push('contacts:write'));
  t.same(app.ctx.credentials.cachedKey(key.key)!.scopes, ['contacts:read']);
  t.equal(app.ctx.credentials.cachedKey('mp_live_nothing-like-this-is-cached'), undefined, 'unknown and uncached: look it up');
});
