// POST /auth/accept-invite: the new user and session, single use, expiry (clock and stored), revocation, bad input, races.
import t from 'tap';
import bcrypt from 'bcrypt';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, registerTenant } from '../../helpers/app.js';
import { inviteMember } from '../../helpers/team.js';

const PASSWORD = 'Invitee-pass-42';
const accept = (app: Parameters<typeof call>[0], body: unknown) => call(app, 'POST', '/auth/accept-invite', { body });

t.test('accepting creates the user with the invited role and returns a working session', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const inv = await inviteMember(s.app, owner.token, 'developer', 'dana@example.test');
  const before = Math.floor(Date.now() / 1000);
  const res = await accept(s.app, { token: inv.token, password: PASSWORD, first_name: ' Dana ' });
  t.equal(res.status, 200);
  const session = res.body.data;
  t.match(session, { token: String, user_id: String, tenant_id: owner.tenantId, expires_at: Number });
  t.ok(session.expires_at >= before + s.config.auth.session_ttl_seconds - 5, 'a login-length session');
  const [user] = await s.sql<{ email: string; role: string; first_name: string; password_hash: string; tenant_id: string }[]>`
    select email, role, first_name, password_hash, tenant_id from users where id = ${session.user_id}`;
  t.match(user, { email: 'dana@example.test', role: 'developer', first_name: 'Dana', tenant_id: owner.tenantId });
  t.ok(await bcrypt.compare(PASSWORD, user!.password_hash), 'bcrypt hash of the chosen password');

  const who = await call(s.app, 'GET', '/whoami', { token: session.token });
  t.match(who.body.data, { credential: 'jwt', user: { id: session.user_id, role: 'developer' }, tenant: { id: owner.tenantId } });
  const login = await call(s.app, 'POST', '/auth/login', { body: { email: 'dana@example.test', password: PASSWORD } });
  t.equal(login.status, 200, 'the new user signs in with the password');

  const [row] = await s.sql<
    { accepted_at: Date | null; accepted_user_id: string }[]
  >`select accepted_at, accepted_user_id from team_invites where id = ${inv.id}`;
  t.ok(row!.accepted_at);
  t.equal(row!.accepted_user_id, session.user_id);
  const [audit] = await s.sql<{ actor_type: string; actor_id: string; tenant_id: string; metadata: Record<string, unknown> }[]>`
    select actor_type, actor_id, tenant_id, metadata from audit_events where action = 'team.invite_accepted' and resource_id = ${inv.id}`;
  t.match(audit, { actor_type: 'user', actor_id: session.user_id, tenant_id: owner.tenantId, metadata: { email: 'dana@example.test', role: 'developer' } });
  t.same((await call(s.app, 'GET', '/team/invites', { token: owner.token })).body.data.items, [], 'no longer pending');
});

t.test('a token works once; an unknown token is 404', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const inv = await inviteMember(s.app, owner.token, 'viewer');
  t.equal((await accept(s.app, { token: inv.token, password: PASSWORD })).status, 200);
  const again = await accept(s.app, { token: inv.token, password: PASSWORD });
  t.equal(again.status, 410);
  t.equal(again.body.error, 'gone');
  const unknown = await accept(s.app, { token: `mpi_${'A'.repeat(43)}`, password: PASSWORD });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error, 'not_found');
  t.equal((await accept(s.app, { token: inv.token.slice(0, -1), password: PASSWORD })).status, 404, 'a truncated token names nothing');
});

t.test('an expired invite is 410: by the clock, and by a stored expiry in the past', async (t) => {
  const clock = new ManualClock(new Date('2030-03-01T10:00:00Z'));
  const s = await buildTestApp(t, { clock, env: { MAILPATH_CONFIG__AUTH__TEAM_INVITE_TTL_HOURS: '48' } });
  const owner = await registerTenant(s.app);
  const inv = await inviteMember(s.app, owner.token, 'viewer');
  t.equal(inv.expires_at, '2030-03-03T10:00:00.000Z', 'the configured lifetime');
  clock.advance(48 * 3_600_000);
  const res = await accept(s.app, { token: inv.token, password: PASSWORD });
  t.equal(res.status, 410, 'at the expiry instant');
  t.match(res.body.message, /expired/);
  // The owner's 12-hour session ended meanwhile: sign in again.
  const relogin = await call(s.app, 'POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
  const token = relogin.body.data.token as string;
  t.same((await call(s.app, 'GET', '/team/invites', { token })).body.data.items, [], 'expired invites are not pending');
  t.ok((await inviteMember(s.app, token, 'viewer', inv.email)).id, 'an address whose invite expired can be invited again');

  clock.set(new Date('2030-03-01T11:00:00Z'));
  const inv2 = await inviteMember(s.app, owner.token, 'viewer');
  await s.sql`update team_invites set expires_at = ${new Date('2030-03-01T10:59:00Z')} where id = ${inv2.id}`;
  t.equal((await accept(s.app, { token: inv2.token, password: PASSWORD })).status, 410);
  t.equal((await s.sql`select 1 from users where email = ${inv2.email}`).length, 0, 'no user was created');
});

t.test('bad input: unexpected fields and malformed JSON are 400, a weak or missing password 422 and consumes nothing', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app, { tenant_slug: 'acme-team' });
  const inv = await inviteMember(s.app, owner.token, 'admin', 'jordan.smith@example.test');
  const extra = await accept(s.app, { token: inv.token, password: PASSWORD, role: 'owner' });
  t.equal(extra.status, 400, 'role cannot be chosen by the invitee');
  t.equal(extra.body.error, 'bad_request');
  t.equal((await call(s.app, 'POST', '/auth/accept-invite', { raw: '{"token":' })).status, 400);
  t.equal((await call(s.app, 'POST', '/auth/accept-invite', { raw: '[]' })).status, 400);
  for (const [password, why] of [
    ['short1A', 'too short'],
    ['alllowercaseletters', 'one class'],
    ['Jordan.smith-2024', 'contains the address'],
    ['Acme-team-2024!', 'contains the tenant slug'],
  ] as const) {
    const res = await accept(s.app, { token: inv.token, password });
    t.equal(res.status, 422, why);
    t.match(res.body.message, /^password: /);
  }
  t.equal((await accept(s.app, { token: inv.token })).status, 422, 'password missing');
  t.equal((await accept(s.app, { password: PASSWORD })).status, 422, 'token missing');
  t.equal((await accept(s.app, { token: '', password: PASSWORD })).status, 422, 'empty token');
  t.equal((await accept(s.app, { token: inv.token, password: PASSWORD, first_name: '' })).status, 422);
  t.equal((await s.sql`select accepted_at from team_invites where id = ${inv.id}`)[0]!.accepted_at, null, 'nothing consumed');
  t.equal((await accept(s.app, { token: inv.token, password: PASSWORD })).status, 200, 'the invite still works');
});

t.test('concurrent accepts of one token: exactly one wins, one user is created', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const inv = await inviteMember(s.app, owner.token, 'developer');
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => accept(s.app, { token: inv.token, password: `${PASSWORD}-${i}` })));
  const statuses = results.map((r) => r.status).sort();
  t.same(statuses, [200, 410, 410, 410, 410, 410]);
  const [row] = await s.sql<{ n: number }[]>`select count(*)::int as n from users where lower(email) = ${inv.email}`;
  t.equal(row!.n, 1);
  const [audit] = await s.sql<{ n: number }[]>`select count(*)::int as n from audit_events where action = 'team.invite_accepted'`;
  t.equal(audit!.n, 1);
});

t.test('an address that became a user meanwhile is 409 and leaves the invite unused', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const inv = await inviteMember(s.app, owner.token, 'viewer', 'race@example.test');
  await registerTenant(s.app, { email: 'race@example.test' });
  const res = await accept(s.app, { token: inv.token, password: PASSWORD });
  t.equal(res.status, 409);
  t.equal(res.body.error, 'conflict');
  t.equal((await s.sql`select accepted_at from team_invites where id = ${inv.id}`)[0]!.accepted_at, null);
  t.equal((await s.sql`select tenant_id from users where email = 'race@example.test'`)[0]!.tenant_id !== owner.tenantId, true);
});

t.test("a suspended tenant's invite is refused with 403 and stays unused", async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const inv = await inviteMember(s.app, owner.token, 'viewer');
  await s.sql`update tenants set status = 'suspended' where id = ${owner.tenantId}`;
  const res = await accept(s.app, { token: inv.token, password: PASSWORD });
  t.equal(res.status, 403);
  t.equal(res.body.error, 'forbidden');
  t.equal((await s.sql`select accepted_at from team_invites where id = ${inv.id}`)[0]!.accepted_at, null);
  await s.sql`update tenants set status = 'active' where id = ${owner.tenantId}`;
  t.equal((await accept(s.app, { token: inv.token, password: PASSWORD })).status, 200, 'usable once the suspension is lifted');
});

t.test('the route is public and documented with its failures', async (t) => {
  const s = await buildTestApp(t);
  const doc = (await call(s.app, 'GET', '/openapi.json')).body;
  const op = doc.paths['/auth/accept-invite'].post;
  t.same(op.security, []);
  for (const code of ['200', '400', '403', '404', '409', '410', '422']) t.ok(op.responses[code], `documents ${code}`);
});
