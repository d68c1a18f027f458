// The role matrix on a sample of routes: viewer reads, developer writes, admin manages the team, owner-only routes; keys keep scopes and their maker's role
// as a ceiling.
import t from 'tap';
import { z } from 'zod';
import type { UserRole } from '../../../shared/accounts/auth/users.js';
import { ROLES, roleAtLeast } from '../../../shared/accounts/team/roles.js';
import { defineRoute } from '../../../api/route.js';
import { buildTestApp, call, countRows, createKey, registerTenant, type TestTenant } from '../../helpers/app.js';
import { addMember } from '../../helpers/team.js';

let n = 0;
const unique = () => `r${++n}-${Math.random().toString(36).slice(2, 7)}`;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
interface Sample {
  method: Method;
  url: string | ((ctx: { owner: TestTenant; victimId: string }) => string);
  body?: () => unknown;
  least: UserRole;
}

const SAMPLES: Sample[] = [
  { method: 'GET', url: '/templates', least: 'viewer' },
  { method: 'POST', url: '/templates', body: () => ({ name: unique(), subject: 'Hi', body_text: 'Hello' }), least: 'developer' },
  { method: 'GET', url: '/suppressions', least: 'viewer' },
  { method: 'POST', url: '/suppressions', body: () => ({ email: `${unique()}@example.test` }), least: 'developer' },
  { method: 'GET', url: '/api-keys', least: 'viewer' },
  { method: 'POST', url: '/api-keys', body: () => ({ name: unique() }), least: 'developer' },
  { method: 'GET', url: '/api-keys/usage', least: 'viewer' },
  { method: 'GET', url: '/team/members', least: 'viewer' },
  { method: 'GET', url: '/team/invites', least: 'admin' },
  { method: 'POST', url: '/team/invites', body: () => ({ email: `${unique()}@example.test`, role: 'viewer' }), least: 'admin' },
  { method: 'PATCH', url: ({ victimId }) => `/team/members/${victimId}`, body: () => ({ role: 'viewer' }), least: 'admin' },
  { method: 'GET', url: '/test/owner-only', least: 'owner' },
  { method: 'POST', url: '/test/owner-only', least: 'owner' },
];

t.test('each role reaches exactly the sample routes at or below it; refusals are 403 forbidden and write nothing', async (t) => {
  const s = await buildTestApp(t);
  // An owner-only route, as the audit PDF export will declare it: `role: 'owner'` in its definition.
  for (const method of ['GET', 'POST'] as const) {
    defineRoute(s.app, {
      method,
      url: '/api/v1/test/owner-only',
      auth: 'any',
      role: 'owner',
      tags: ['Test'],
      summary: 'owner only',
      description: 'test',
      response: z.object({ ok: z.boolean() }),
      handler: async () => ({ ok: true }),
    });
  }
  const owner = await registerTenant(s.app);
  const tokens: Record<UserRole, string> = { owner: owner.token, admin: '', developer: '', viewer: '' };
  for (const role of ['admin', 'developer', 'viewer'] as const) tokens[role] = (await addMember(s.app, owner, role)).token;
  const victim = await addMember(s.app, owner, 'viewer');

  for (const sample of SAMPLES) {
    for (const role of ROLES) {
      const url = typeof sample.url === 'function' ? sample.url({ owner, victimId: victim.userId }) : sample.url;
      const res = await call(s.app, sample.method, url, { token: tokens[role], ...(sample.body ? { body: sample.body() } : {}) });
      const label = `${role} ${sample.method} ${url}`;
      if (roleAtLeast(role, sample.least)) {
        t.ok(res.status >= 200 && res.status < 300, `${label}: allowed (${res.status})`);
      } else {
        t.equal(res.status, 403, `${label}: refused`);
        t.equal(res.body.error, 'forbidden');
        t.match(res.body.message, new RegExp(`needs the ${sample.least} role or higher; your role is ${role}`));
      }
    }
  }
  const templates = await countRows(s.sql, 'templates', owner.tenantId);
  t.equal(templates, 3, 'only developer, admin and owner created templates');
});

t.test('a viewer still runs its own account flows under /auth/', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const viewer = await addMember(s.app, owner, 'viewer');
  const enroll = await call(s.app, 'POST', '/auth/2fa/enroll', { token: viewer.token });
  t.not(enroll.status, 403, `POST /auth/2fa/enroll as a viewer (${enroll.status})`);
  t.equal((await call(s.app, 'GET', '/whoami', { token: viewer.token })).status, 200);
});

t.test("a key's role is its maker's when made (its ceiling): made by a member later demoted, it still writes, within its scopes", async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const dev = await addMember(s.app, owner, 'developer');
  const full = await call(s.app, 'POST', '/api-keys', { token: dev.token, body: { name: 'ci' } });
  const scoped = await call(s.app, 'POST', '/api-keys', { token: dev.token, body: { name: 'reader', scopes: ['templates:read'] } });
  t.equal((await call(s.app, 'PATCH', `/team/members/${dev.userId}`, { token: owner.token, body: { role: 'viewer' } })).status, 200);
  t.equal(
    (await call(s.app, 'POST', '/templates', { token: dev.token, body: { name: 'x', subject: 's', body_text: 't' } })).status,
    403,
    'the demoted user cannot write',
  );
  const byKey = await call(s.app, 'POST', '/templates', { token: full.body.data.key, body: { name: 'y', subject: 's', body_text: 't' } });
  t.equal(byKey.status, 201, 'the key can');
  const byScoped = await call(s.app, 'POST', '/templates', { token: scoped.body.data.key, body: { name: 'z', subject: 's', body_text: 't' } });
  t.equal(byScoped.status, 403);
  t.equal(byScoped.body.error, 'invalid_scope', 'scope rules are unchanged');
  const other = await createKey(s.app, owner);
  t.equal((await call(s.app, 'GET', '/team/members', { token: other.key })).status, 403, 'team routes take sessions only');
});

t.test('the OpenAPI document states the least role of routes above viewer', async (t) => {
  const s = await buildTestApp(t);
  const doc = (await call(s.app, 'GET', '/openapi.json')).body;
  t.match(doc.paths['/team/invites'].post.description, /Users need the `admin` role or higher/);
  t.match(doc.paths['/templates'].post.description, /Users need the `developer` role or higher/);
  t.notMatch(doc.paths['/templates'].get.description, /role or higher/);
  t.notMatch(doc.paths['/auth/2fa/enroll'].post.description, /role or higher/, 'own account flows are open to every role');
});
