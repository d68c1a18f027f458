// Team routes: invites (create, list, revoke, e-mail), members (list, role changes, removal), the owner/admin rules, tenants apart.
import { createHash } from 'node:crypto';
import t from 'tap';
import { simpleParser } from 'mailparser';
import { chainAndVerify } from '../../../shared/operations/audit/appender.js';
import { buildTestApp, call, registerTenant } from '../../helpers/app.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { addMember, inviteMember } from '../../helpers/team.js';

const FAKE_ID = '0b9c4d2e-1f3a-4b5c-8d6e-7f8091a2b3c4';

t.test('an invite returns the token and an accept link on MAILPATH_PUBLIC_URL, stores only its hash, and is listed until revoked', async (t) => {
  const s = await buildTestApp(t, { env: { MAILPATH_PUBLIC_URL: 'https://mail.example.test:9443/app/' } });
  const owner = await registerTenant(s.app);
  const before = Date.now();
  const res = await call(s.app, 'POST', '/team/invites', { token: owner.token, body: { email: 'New.Person@Example.test', role: 'developer' } });
  t.equal(res.status, 201);
  const inv = res.body.data;
  t.match(inv, { id: String, email: 'new.person@example.test', role: 'developer', invited_by: owner.userId, email_sent: false });
  t.match(inv.token, /^mpi_[A-Za-z0-9_-]{43}$/);
  t.equal(inv.accept_url, `https://mail.example.test:9443/app/accept-invite?token=${inv.token}`);
  const ttl = new Date(inv.expires_at).getTime() - before;
  t.ok(ttl > 167 * 3_600_000 && ttl <= 168 * 3_600_000 + 60_000, 'expires after team_invite_ttl_hours (168)');
  const [row] = await s.sql<{ token_hash: string }[]>`select token_hash from team_invites where id = ${inv.id}`;
  t.equal(row!.token_hash, createHash('sha256').update(inv.token).digest('hex'), 'only the SHA-256 of the token is stored');
  const stored = await s.sql`select * from team_invites where row_to_json(team_invites)::text like ${`%${inv.token}%`}`;
  t.equal(stored.length, 0, 'the token itself is nowhere in the row');

  const list = await call(s.app, 'GET', '/team/invites', { token: owner.token });
  t.same(
    list.body.data.items.map((i: { id: string }) => i.id),
    [inv.id],
  );
  t.notOk('token' in list.body.data.items[0], 'the list never shows the token');

  const revoked = await call(s.app, 'DELETE', `/team/invites/${inv.id}`, { token: owner.token });
  t.same(revoked.body, { ok: true, data: { status: 'revoked' } });
  t.same((await call(s.app, 'GET', '/team/invites', { token: owner.token })).body.data.items, []);
  t.equal((await call(s.app, 'DELETE', `/team/invites/${inv.id}`, { token: owner.token })).status, 404, 'revoking twice');
  const accept = await call(s.app, 'POST', '/auth/accept-invite', { body: { token: inv.token, password: 'Member-pass-42' } });
  t.equal(accept.status, 410, 'a revoked invite is gone');

  const audit = await s.sql<{ action: string; actor_id: string; metadata: Record<string, unknown> }[]>`
    select action, actor_id, metadata from audit_events where resource_id = ${inv.id} order by id`;
  t.same(
    audit.map((a) => a.action),
    ['team.invite_created', 'team.invite_revoked'],
  );
  t.equal(audit[0]!.actor_id, owner.userId);
  t.match(audit[0]!.metadata, { email: 'new.person@example.test', role: 'developer' });
  t.equal((await chainAndVerify(s.sql)).intact, true);
});

t.test('the invite is e-mailed through the system mailer when one is configured; a mailer failure still returns the link', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const sent: { to: string; subject: string; text: string }[] = [];
  let fail = false;
  (s.ctx as unknown as { systemMail: unknown }).systemMail = {
    async send(m: { to: string; subject: string; text: string }) {
      if (fail) throw new Error('relay down');
      sent.push(m);
      return { sent: true };
    },
  };
  const inv = await inviteMember(s.app, owner.token, 'viewer', 'mailed@example.test');
  t.equal(inv.email_sent, true);
  t.equal(sent.length, 1);
  t.equal(sent[0]!.to, 'mailed@example.test');
  t.match(sent[0]!.subject, /invite/i);
  t.ok(sent[0]!.text.includes(inv.accept_url), 'the mail carries the accept link');
  t.match(sent[0]!.text, /viewer/);
  fail = true;
  const second = await inviteMember(s.app, owner.token, 'viewer', 'unlucky@example.test');
  t.equal(second.email_sent, false);
  t.ok(second.accept_url.includes(second.token));
});

t.test('with a system sender at a verified platform domain, the invite is a real send through the outbound path', async (t) => {
  const s = await buildTestApp(t, { env: { MAILPATH_SYSTEM_SENDER: 'team@platform-mail.test' } });
  const [platform] = await s.sql<{ id: string }[]>`select id from tenants where is_super_admin`;
  await verifiedSendingDomain(s.sql, s.ctx.vault, platform!.id, 'platform-mail.test');
  const owner = await registerTenant(s.app);
  const inv = await inviteMember(s.app, owner.token, 'developer', 'invitee@example.test');
  t.equal(inv.email_sent, true);
  const sends = await s.sql<{ tenant_id: string; from_email: string; to_email: string; status: string; message: Buffer }[]>`
    select tenant_id, from_email, to_email, status, message from sends`;
  t.equal(sends.length, 1);
  t.match(sends[0], { tenant_id: platform!.id, from_email: 'team@platform-mail.test', to_email: 'invitee@example.test', status: 'queued' });
  const parsed = await simpleParser(sends[0]!.message);
  t.ok(parsed.headers.get('dkim-signature'), 'DKIM-signed like any send');
  t.ok(parsed.text?.includes(inv.accept_url), 'the mail carries the accept link');
  t.equal((await call(s.app, 'POST', '/auth/accept-invite', { body: { token: inv.token, password: 'Member-pass-42' } })).status, 200, 'the mailed link works');
});

t.test('invites: existing users, pending duplicates, bad input and the owner rule', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const other = await registerTenant(s.app);
  const post = (token: string, body: unknown) => call(s.app, 'POST', '/team/invites', { token, body });

  const taken = await post(owner.token, { email: other.email.toUpperCase(), role: 'viewer' });
  t.equal(taken.status, 409, 'an address of a user (any tenant, any case) is a conflict');
  t.equal(taken.body.error, 'conflict');
  t.match(taken.body.message, /already belongs to a user/);
  t.equal((await post(owner.token, { email: owner.email, role: 'admin' })).status, 409, 'a member of this tenant');

  await inviteMember(s.app, owner.token, 'viewer', 'twice@example.test');
  const dup = await post(owner.token, { email: 'Twice@example.test', role: 'developer' });
  t.equal(dup.status, 409);
  t.match(dup.body.message, /pending invite/);
  t.equal((await post(other.token, { email: 'twice@example.test', role: 'viewer' })).status, 201, 'another tenant may invite the same address');

  t.equal((await post(owner.token, { email: 'not-an-email', role: 'viewer' })).status, 422);
  const badRole = await post(owner.token, { email: 'x@example.test', role: 'superuser' });
  t.equal(badRole.status, 422);
  t.match(badRole.body.message, /^role/);
  t.equal((await post(owner.token, { email: 'x@example.test', role: 'viewer', extra: 1 })).status, 400);
  t.equal((await call(s.app, 'POST', '/team/invites', { token: owner.token, raw: '{"email":' })).status, 400);

  const admin = await addMember(s.app, owner, 'admin');
  const asAdmin = await post(admin.token, { email: 'boss@example.test', role: 'owner' });
  t.equal(asAdmin.status, 403, 'an admin cannot invite an owner');
  t.equal(asAdmin.body.error, 'forbidden');
  t.equal((await post(admin.token, { email: 'helper@example.test', role: 'admin' })).status, 201, 'an admin may invite an admin');
  const ownerInvite = await inviteMember(s.app, owner.token, 'owner', 'co-owner@example.test');
  t.equal((await call(s.app, 'DELETE', `/team/invites/${ownerInvite.id}`, { token: admin.token })).status, 403, 'nor revoke an owner invite');
  t.equal((await call(s.app, 'DELETE', `/team/invites/${ownerInvite.id}`, { token: owner.token })).status, 200);
  t.equal((await call(s.app, 'GET', '/api-keys', { token: owner.token })).status, 200);
});

t.test("another tenant's invites and members are 404", async (t) => {
  const s = await buildTestApp(t);
  const a = await registerTenant(s.app);
  const b = await registerTenant(s.app);
  const inv = await inviteMember(s.app, a.token, 'viewer');
  const member = await addMember(s.app, a, 'developer');
  for (const [method, url, body] of [
    ['DELETE', `/team/invites/${inv.id}`],
    ['PATCH', `/team/members/${member.userId}`, { role: 'viewer' }],
    ['DELETE', `/team/members/${member.userId}`],
    ['DELETE', `/team/invites/${FAKE_ID}`],
    ['PATCH', `/team/members/${FAKE_ID}`, { role: 'viewer' }],
    ['DELETE', '/team/members/not-a-uuid'],
  ] as const) {
    const res = await call(s.app, method, url, { token: b.token, ...(body ? { body } : {}) });
    t.equal(res.status, 404, `${method} ${url}`);
    t.equal(res.body.error, 'not_found');
  }
  t.same((await call(s.app, 'GET', '/team/invites', { token: b.token })).body.data.items, []);
  t.same(
    (await call(s.app, 'GET', '/team/members', { token: b.token })).body.data.items.map((m: { id: string }) => m.id),
    [b.userId],
  );
  t.equal((await s.sql`select role from users where id = ${member.userId}`)[0]!.role, 'developer', 'untouched');
});

t.test('members are listed with their role and 2FA state; role changes follow the owner/admin rules and are audited', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app, { first_name: 'Olga' });
  const admin = await addMember(s.app, owner, 'admin');
  const dev = await addMember(s.app, owner, 'developer');
  const list = await call(s.app, 'GET', '/team/members', { token: dev.token });
  t.equal(list.status, 200, 'any member may see the team');
  t.same(
    list.body.data.items.map((m: { id: string; role: string }) => [m.id, m.role]),
    [
      [owner.userId, 'owner'],
      [admin.userId, 'admin'],
      [dev.userId, 'developer'],
    ],
  );
  t.match(list.body.data.items[0], { email: owner.email, first_name: 'Olga', created_at: String, two_factor_enabled: false });
  await s.sql`insert into user_totp (user_id, secret_sealed, enabled_at) values (${dev.userId}, '\\x00', now())`;
  const after = await call(s.app, 'GET', '/team/members', { token: owner.token });
  t.equal(after.body.data.items[2].two_factor_enabled, true);

  const patch = (token: string, id: string, role: string) => call(s.app, 'PATCH', `/team/members/${id}`, { token, body: { role } });
  const promoted = await patch(admin.token, dev.userId, 'admin');
  t.equal(promoted.status, 200);
  t.match(promoted.body.data, { id: dev.userId, role: 'admin' });
  t.equal((await call(s.app, 'GET', '/whoami', { token: dev.token })).body.data.user.role, 'admin', 'the new role applies at once');
  t.equal((await patch(admin.token, dev.userId, 'owner')).status, 403, 'an admin cannot give the owner role');
  t.equal((await patch(admin.token, owner.userId, 'viewer')).status, 403, 'nor demote an owner');
  t.equal((await patch(admin.token, dev.userId, 'developer')).status, 200, 'an admin may demote an admin');
  t.equal((await patch(owner.token, dev.userId, 'owner')).status, 200, 'an owner may make an owner');
  t.equal((await patch(owner.token, dev.userId, 'owner')).status, 200, 'the same role again is a no-op');
  t.equal((await patch(owner.token, dev.userId, 'root')).status, 422);
  t.equal((await call(s.app, 'PATCH', `/team/members/${dev.userId}`, { token: owner.token, body: {} })).status, 422);

  const audit = await s.sql<{ metadata: { before: string; after: string }; actor_id: string }[]>`
    select metadata, actor_id from audit_events where action = 'team.role_changed' and resource_id = ${dev.userId} order by id`;
  t.same(
    audit.map((a) => [a.metadata.before, a.metadata.after]),
    [
      ['developer', 'admin'],
      ['admin', 'developer'],
      ['developer', 'owner'],
    ],
  );
  t.same(
    audit.map((a) => a.actor_id),
    [admin.userId, admin.userId, owner.userId],
  );
});

t.test('the last owner can be neither demoted nor removed; with two, one may step down', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const admin = await addMember(s.app, owner, 'admin');
  const demote = await call(s.app, 'PATCH', `/team/members/${owner.userId}`, { token: owner.token, body: { role: 'admin' } });
  t.equal(demote.status, 409);
  t.equal(demote.body.error, 'conflict');
  t.match(demote.body.message, /last owner/);
  const remove = await call(s.app, 'DELETE', `/team/members/${owner.userId}`, { token: owner.token });
  t.equal(remove.status, 409);
  t.match(remove.body.message, /last owner/);
  t.equal((await call(s.app, 'DELETE', `/team/members/${owner.userId}`, { token: admin.token })).status, 403, 'an admin cannot remove an owner at all');

  await call(s.app, 'PATCH', `/team/members/${admin.userId}`, { token: owner.token, body: { role: 'owner' } });
  t.equal(
    (await call(s.app, 'PATCH', `/team/members/${owner.userId}`, { token: owner.token, body: { role: 'developer' } })).status,
    200,
    'two owners: one may step down',
  );
  const owners = await s.sql`select id from users where tenant_id = ${owner.tenantId} and role = 'owner'`;
  t.same(
    owners.map((o) => o.id),
    [admin.userId],
  );
});

t.test('two owners demoting each other at once: exactly one succeeds, one owner is left', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const second = await addMember(s.app, owner, 'owner');
  const results = await Promise.all([
    call(s.app, 'PATCH', `/team/members/${second.userId}`, { token: owner.token, body: { role: 'viewer' } }),
    call(s.app, 'PATCH', `/team/members/${owner.userId}`, { token: second.token, body: { role: 'viewer' } }),
  ]);
  // The loser is refused either by the last-owner rule (409) or, when the winner committed before its
  // credential was read, as the viewer it has just become (403): never both succeed.
  const [first, second2] = results.map((r) => r.status).sort();
  t.equal(first, 200, 'one demotion succeeds');
  t.ok(second2 === 409 || second2 === 403, `the other is refused (${second2})`);
  const [row] = await s.sql<{ n: number }[]>`select count(*)::int as n from users where tenant_id = ${owner.tenantId} and role = 'owner'`;
  t.equal(row!.n, 1);
});

t.test('removing a member deletes the user, ends their sessions at once, and is audited', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const admin = await addMember(s.app, owner, 'admin');
  const dev = await addMember(s.app, owner, 'developer');
  const viewer = await addMember(s.app, owner, 'viewer');
  t.equal((await call(s.app, 'GET', '/whoami', { token: dev.token })).status, 200);
  const key = await call(s.app, 'POST', '/api-keys', { token: dev.token, body: { name: 'dev key' } });
  t.equal(key.status, 201);

  const res = await call(s.app, 'DELETE', `/team/members/${dev.userId}`, { token: admin.token });
  t.same(res.body, { ok: true, data: { status: 'removed' } });
  const after = await call(s.app, 'GET', '/whoami', { token: dev.token });
  t.equal(after.status, 401, "the removed member's session stops working");
  t.equal((await s.sql`select 1 from users where id = ${dev.userId}`).length, 0);
  t.equal((await call(s.app, 'GET', '/whoami', { token: key.body.data.key })).status, 200, 'keys belong to the tenant and keep working');
  t.equal((await call(s.app, 'DELETE', `/team/members/${dev.userId}`, { token: admin.token })).status, 404, 'removing twice');
  t.equal((await call(s.app, 'DELETE', `/team/members/${admin.userId}`, { token: viewer.token })).status, 403, 'a viewer removes nobody');

  const [audit] = await s.sql<{ actor_id: string; metadata: Record<string, unknown> }[]>`
    select actor_id, metadata from audit_events where action = 'team.member_removed' and resource_id = ${dev.userId}`;
  t.equal(audit!.actor_id, admin.userId);
  t.match(audit!.metadata, { email: dev.email, role: 'developer' });

  // The address is free again: it can be invited back.
  t.equal((await call(s.app, 'POST', '/team/invites', { token: owner.token, body: { email: dev.email, role: 'viewer' } })).status, 201);
  t.equal((await chainAndVerify(s.sql)).intact, true);
});
