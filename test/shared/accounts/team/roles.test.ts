// The role policy: order, route defaults, who may manage whom, and the guard's check (users only).
import t from 'tap';
import type { Principal } from '../../../../shared/accounts/auth/principal.js';
import type { UserRole } from '../../../../shared/accounts/auth/users.js';
import { AppError } from '../../../../shared/kernel/errors.js';
import { canManageRole, defaultRouteRole, isRole, requireRole, roleAtLeast, ROLES } from '../../../../shared/accounts/team/roles.js';

t.test('roles are ordered viewer < developer < admin < owner', async (t) => {
  t.same(ROLES, ['viewer', 'developer', 'admin', 'owner']);
  for (const [i, a] of ROLES.entries()) {
    for (const [j, b] of ROLES.entries()) t.equal(roleAtLeast(a, b), i >= j, `${a} at least ${b}`);
  }
  t.ok(isRole('admin'));
  t.notOk(isRole('root'));
  t.notOk(isRole('Owner'));
});

t.test('without a declared role, reads and own-account flows need viewer, other writes developer', async (t) => {
  for (const m of ['GET', 'HEAD', 'OPTIONS']) t.equal(defaultRouteRole(m, '/templates'), 'viewer', m);
  for (const m of ['POST', 'PUT', 'PATCH', 'DELETE']) {
    t.equal(defaultRouteRole(m, '/templates'), 'developer', `${m} /templates`);
    t.equal(defaultRouteRole(m, '/auth/2fa/enroll'), 'viewer', `${m} /auth/2fa/enroll`);
    t.equal(defaultRouteRole(m, ''), 'developer', `${m} of a route outside defineRoute`);
  }
  t.equal(defaultRouteRole('POST', '/authx/thing'), 'developer', 'only the /auth/ folder');
});

t.test('owners manage everyone, admins everyone but owners, others nobody', async (t) => {
  const expected: Record<UserRole, UserRole[]> = {
    owner: ['viewer', 'developer', 'admin', 'owner'],
    admin: ['viewer', 'developer', 'admin'],
    developer: [],
    viewer: [],
  };
  for (const actor of ROLES) {
    for (const target of ROLES) t.equal(canManageRole(actor, target), expected[actor].includes(target), `${actor} manages ${target}`);
  }
});

t.test('requireRole refuses users below the role, and keys above their ceiling, with 403 forbidden', async (t) => {
  const tenant = { id: 't', name: 'T', slug: 't', plan_id: 'free', is_sandbox: false, is_super_admin: false, status: 'active' as const };
  const user = (role: UserRole): Principal => ({
    kind: 'user',
    tenant,
    user: { id: 'u', email: 'u@example.test', role, is_super_admin: false, first_name: null },
    key: undefined,
    scopes: [],
  });
  t.doesNotThrow(() => requireRole(user('owner'), 'owner'));
  t.doesNotThrow(() => requireRole(user('admin'), 'developer'));
  const err = t.throws(() => requireRole(user('developer'), 'admin')) as unknown as AppError;
  t.ok(err instanceof AppError);
  t.equal(err.slug, 'forbidden');
  t.equal(err.status, 403);
  t.match(err.message, 'needs the admin role or higher; your role is developer');
  const key = (role: UserRole): Principal => ({
    kind: 'api_key',
    tenant,
    user: undefined,
    key: { id: 'k', name: 'k', prefix: 'p', mode: 'live', scopes: [], role },
    scopes: [],
  });
  t.doesNotThrow(() => requireRole(key('owner'), 'owner'), "an owner's key reaches owner routes");
  t.doesNotThrow(() => requireRole(key('developer'), 'developer'));
  const keyErr = t.throws(() => requireRole(key('admin'), 'owner')) as unknown as AppError;
  t.equal(keyErr.slug, 'forbidden');
  t.match(keyErr.message, "needs the owner role or higher; this API key's ceiling is admin, the role of the user who made it");
});
