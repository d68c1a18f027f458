// Impersonation: the token's claims and lifetime, what it may reach, and one super_admin.impersonation_action audit row per write, written by the queue worker.
import { decodeJwt } from 'jose';
import t from 'tap';
import { chainAndVerify } from '../../../shared/operations/audit/appender.js';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { startImpersonationAuditWorker } from '../../../jobs/impersonation-audit.js';
import { buildTestApp, call, countRows, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';
import { addMember } from '../../helpers/team.js';
import { stopOnTeardown } from '../../helpers/net.js';

const clock = new ManualClock(new Date());
const s = await buildTestApp(t, { clock });
const admin = await superAdminToken(s.app);
const [adminUser] = await s.sql<{ id: string }[]>`select id from users where is_super_admin`;
const adminId = adminUser!.id;

const impersonationRows = (tenantId: string) =>
  s.sql<{ actor_type: string; actor_id: string; metadata: Record<string, unknown> }[]>`
    select actor_type, actor_id, metadata from audit_events where tenant_id = ${tenantId} and action = 'super_admin.impersonation_action' order by id`;

t.test('the token: claims, default and bounded lifetime, start audited', async (t) => {
  const tenant = await registerTenant(s.app);
  const res = await call(s.app, 'POST', `/admin/tenants/${tenant.tenantId}/impersonate`, { token: admin, body: {} });
  t.equal(res.status, 200);
  const d = res.body.data;
  t.match(d, { tenant_id: tenant.tenantId, is_impersonating: true, impersonator_user_id: adminId, ttl_minutes: 30 });
  const claims = decodeJwt(d.token);
  t.match(claims, { tid: tenant.tenantId, sub: adminId, is_impersonating: true, impersonator_user_id: adminId });
  t.equal(claims.exp! - claims.iat!, 30 * 60, 'default 30 minutes');
  t.equal(Date.parse(d.expires_at), claims.exp! * 1000);

  const noBody = await call(s.app, 'POST', `/admin/tenants/${tenant.tenantId}/impersonate`, { token: admin });
  t.equal(noBody.body.data.ttl_minutes, 30, 'no body: the default');
  const long = await call(s.app, 'POST', `/admin/tenants/${tenant.tenantId}/impersonate`, { token: admin, body: { ttl_minutes: 120 } });
  t.equal(decodeJwt(long.body.data.token).exp! - decodeJwt(long.body.data.token).iat!, 120 * 60);
  for (const ttl of [0, 121, 1.5, '30']) {
    const bad = await call(s.app, 'POST', `/admin/tenants/${tenant.tenantId}/impersonate`, { token: admin, body: { ttl_minutes: ttl } });
    t.equal(bad.status, 422, `ttl_minutes ${JSON.stringify(ttl)} → 422`);
    t.equal(bad.body.error, 'validation_error');
  }
  const unknown = await call(s.app, 'POST', '/admin/tenants/00000000-0000-4000-8000-000000000000/impersonate', { token: admin, body: {} });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error, 'not_found');
  const started =
    await s.sql`select actor_id, metadata from audit_events where tenant_id = ${tenant.tenantId} and action = 'super_admin.impersonation_started'`;
  t.equal(started.length, 3, 'each token minted is audited');
  t.equal(started[0]!.actor_id, adminId);
});

t.test('acting as the tenant: its data, no /admin, not the super-admin account; expiry', async (t) => {
  const tenant = await registerTenant(s.app);
  const other = await registerTenant(s.app);
  const { token } = (await call(s.app, 'POST', `/admin/tenants/${tenant.tenantId}/impersonate`, { token: admin, body: { ttl_minutes: 5 } })).body.data;

  const who = await call(s.app, 'GET', '/whoami', { token });
  t.equal(who.status, 200);
  t.equal(who.body.data.tenant.id, tenant.tenantId, 'scoped to the tenant');
  const list = await call(s.app, 'POST', '/lists', { token, body: { name: 'Made by support' } });
  t.equal(list.status < 300, true, 'writes in the tenant');
  const seen = await call(s.app, 'GET', `/lists/${list.body.data.id}`, { token: tenant.token });
  t.equal(seen.status, 200, "the tenant's owner sees it");
  t.equal((await call(s.app, 'GET', `/lists/${list.body.data.id}`, { token: other.token })).status, 404, 'another tenant does not');

  const adminRoute = await call(s.app, 'GET', '/admin/tenants', { token });
  t.equal(adminRoute.status, 403, 'no /admin route with it');
  t.equal(adminRoute.body.error, 'forbidden');
  const account = await call(s.app, 'POST', '/auth/2fa/enroll', { token });
  t.equal(account.status, 403, "not the super-admin's own account");
  t.equal(account.body.error, 'forbidden');

  clock.advance(5 * 60 * 1000 + 1000);
  t.equal((await call(s.app, 'GET', '/whoami', { token })).status, 401, 'expired → 401');
  t.equal((await call(s.app, 'GET', '/whoami', { token: admin })).status, 200, "the super-admin's own session is unaffected");
});

t.test('every write made with the token gets its audit row through the queue', async (t) => {
  const tenant = await registerTenant(s.app);
  const { token } = (await call(s.app, 'POST', `/admin/tenants/${tenant.tenantId}/impersonate`, { token: admin, body: {} })).body.data;

  const created = await call(s.app, 'POST', '/lists', { token, body: { name: 'Support list' } });
  const listId = created.body.data.id;
  const writes: [string, string, number][] = [['POST', '/api/v1/lists', created.status]];
  const patched = await call(s.app, 'PATCH', `/lists/${listId}`, { token, body: { name: 'Renamed' } });
  writes.push(['PATCH', `/api/v1/lists/${listId}`, patched.status]);
  const refused = await call(s.app, 'POST', '/lists', { token, body: { name: '' } });
  writes.push(['POST', '/api/v1/lists', refused.status]);
  const deleted = await call(s.app, 'DELETE', `/lists/${listId}`, { token });
  writes.push(['DELETE', `/api/v1/lists/${listId}`, deleted.status]);
  // Reads are not audited.
  await call(s.app, 'GET', '/lists', { token });
  await call(s.app, 'GET', '/whoami', { token });
  // The owner's own writes are not impersonated.
  await call(s.app, 'POST', '/lists', { token: tenant.token, body: { name: 'Owner list' } });

  // Queued after the answers; nothing is written until a worker takes the jobs.
  const worker = stopOnTeardown(t, await startImpersonationAuditWorker({ sql: s.sql, boss: s.boss, log: s.ctx.log }));
  let rows = await impersonationRows(tenant.tenantId);
  for (let i = 0; i < 100 && rows.length < writes.length; i++) {
    await new Promise((r) => setTimeout(r, 100));
    rows = await impersonationRows(tenant.tenantId);
  }
  await worker.stop();
  t.equal(rows.length, writes.length, 'one row per write, none for reads or the owner');
  const got = rows.map((r) => [r.metadata['method'], r.metadata['path'], r.metadata['status_code']]).sort();
  t.same(got, [...writes].sort(), 'method, path and status of each write');
  for (const r of rows) {
    t.equal(r.actor_type, 'user');
    t.equal(r.actor_id, adminId, 'the actor is the super-admin');
    t.equal(r.metadata['impersonator_user_id'], adminId);
  }
  t.equal((await chainAndVerify(s.sql)).intact, true, 'the audit chain is intact');
});

t.test('an impersonated session cannot grant lasting access: no keys, scope changes, invites or role changes (403)', async (t) => {
  const tenant = await registerTenant(s.app);
  const member = await addMember(s.app, tenant, 'viewer');
  const key = await createKey(s.app, tenant, { scopes: ['templates:read'] });
  const { token } = (await call(s.app, 'POST', `/admin/tenants/${tenant.tenantId}/impersonate`, { token: admin, body: {} })).body.data;
  const keysBefore = await countRows(s.sql, 'api_keys', tenant.tenantId);
  const invitesBefore = await countRows(s.sql, 'team_invites', tenant.tenantId);
  const attempts: [method: 'POST' | 'PATCH', url: string, body: unknown][] = [
    ['POST', '/api-keys', { name: 'forever' }],
    ['PATCH', `/api-keys/${key.id}/scopes`, { scopes: [] }],
    ['POST', '/team/invites', { email: 'new-owner@example.test', role: 'owner' }],
    ['PATCH', `/team/members/${member.userId}`, { role: 'owner' }],
  ];
  for (const [method, url, body] of attempts) {
    const res = await call(s.app, method, url, { token, body });
    t.equal(res.status, 403, `${method} ${url}`);
    t.equal(res.body.error, 'forbidden');
    t.match(res.body.message, 'an impersonated session cannot grant lasting access');
  }
  t.equal(await countRows(s.sql, 'api_keys', tenant.tenantId), keysBefore, 'no key made');
  t.equal(await countRows(s.sql, 'team_invites', tenant.tenantId), invitesBefore, 'no invite made');
  const [scopes] = await s.sql<{ scopes: string[] }[]>`select scopes from api_keys where id = ${key.id}`;
  t.same(scopes!.scopes, ['templates:read'], 'the key keeps its scopes');
  const [role] = await s.sql<{ role: string }[]>`select role from users where id = ${member.userId}`;
  t.equal(role!.role, 'viewer', 'the member keeps their role');
  // Revoking access is not granting it: still allowed, and still audited as an impersonated write.
  t.equal((await call(s.app, 'DELETE', `/api-keys/${key.id}`, { token })).status, 200, 'revoking a key is allowed');
  // The tenant's own owner still can.
  t.equal((await call(s.app, 'POST', '/api-keys', { token: tenant.token, body: { name: 'by the owner' } })).status, 201);
});
