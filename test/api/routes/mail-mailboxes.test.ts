// Workspace mailboxes through the API: create at a verified domain, strict addresses, 409, list/read/delete, invites, access rules, isolation.
import { createHash } from 'node:crypto';
import t from 'tap';
import type { Clock } from '../../../shared/kernel/clock.js';
import { buildTestApp as buildApp, call, countRows, createKey, registerTenant, type TestApp, type TestLike } from '../../helpers/app.js';
import { createTestMailbox, deliverToMailbox, verifiedMailDomain } from '../../helpers/inbound-rows.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';
import { insertDomain } from '../../helpers/tenant-rows.js';

/** Real time, never the same millisecond twice, so "newest first" is never a tie. */
const buildTestApp = (t: TestLike) => {
  let last = 0;
  const clock: Clock = { now: () => new Date((last = Math.max(Date.now(), last + 1))) };
  return buildApp(t, { clock });
};

async function tenantWithDomain(s: TestApp) {
  const owner = await registerTenant(s.app);
  return { owner, domain: await verifiedMailDomain(s.sql, owner.tenantId) };
}

t.test('create, read, list, delete; addresses are trimmed and lower-cased; changes are audited', async (t) => {
  const s = await buildTestApp(t);
  const { owner, domain } = await tenantWithDomain(s);
  const res = await call(s.app, 'POST', '/mail/mailboxes', {
    token: owner.token,
    body: { address: `  Sales.Team@${domain.toUpperCase()} `, display_name: ' Sales ' },
  });
  t.equal(res.status, 201);
  const made = res.body.data;
  t.match(made, {
    id: String,
    address: `sales.team@${domain}`,
    display_name: 'Sales',
    domain_id: String,
    password_set: false,
    created_at: String,
    updated_at: String,
  });
  const second = await createTestMailbox(s.app, owner.token, owner.tenantId, `support@${domain}`);

  const got = await call(s.app, 'GET', `/mail/mailboxes/${made.id}`, { token: owner.token });
  t.equal(got.status, 200);
  t.same(got.body.data, made);

  const page1 = await call(s.app, 'GET', '/mail/mailboxes?limit=1', { token: owner.token });
  t.equal(page1.status, 200);
  t.equal(page1.body.total, 2);
  t.same(
    page1.body.data.map((m: { id: string }) => m.id),
    [second.id],
    'newest first',
  );
  t.type(page1.body.next_cursor, 'string');
  const page2 = await call(s.app, 'GET', `/mail/mailboxes?limit=1&after=${page1.body.next_cursor}`, { token: owner.token });
  t.same(
    page2.body.data.map((m: { id: string }) => m.id),
    [made.id],
  );
  t.equal(page2.body.next_cursor, null);
  t.equal((await call(s.app, 'GET', '/mail/mailboxes?after=bogus', { token: owner.token })).status, 400, 'a made-up cursor');

  // Messages and invites go with the mailbox.
  await deliverToMailbox(s.sql, { tenantId: owner.tenantId, id: made.id, address: made.address });
  t.equal((await call(s.app, 'POST', `/mail/mailboxes/${made.id}/invite`, { token: owner.token })).status, 201);
  const del = await call(s.app, 'DELETE', `/mail/mailboxes/${made.id}`, { token: owner.token });
  t.equal(del.status, 200);
  t.same(del.body.data, { deleted: true, id: made.id });
  t.equal((await call(s.app, 'GET', `/mail/mailboxes/${made.id}`, { token: owner.token })).status, 404);
  t.equal((await call(s.app, 'DELETE', `/mail/mailboxes/${made.id}`, { token: owner.token })).status, 404, 'deleting twice');
  t.equal((await call(s.app, 'GET', '/mail/mailboxes/not-a-uuid', { token: owner.token })).status, 404, 'a malformed id names nothing');
  t.equal(await countRows(s.sql, 'mailbox_messages', owner.tenantId), 0, 'its messages are gone');
  t.equal(await countRows(s.sql, 'mailbox_invites', owner.tenantId), 0, 'its invites are gone');
  t.equal((await call(s.app, 'POST', '/mail/mailboxes', { token: owner.token, body: { address: made.address } })).status, 201, 'the address is free again');

  const audit = await s.sql<{ action: string; actor_type: string; actor_id: string; resource_id: string; metadata: Record<string, unknown> }[]>`
    select action, actor_type, actor_id, resource_id, metadata from audit_events
    where tenant_id = ${owner.tenantId} and resource_type = 'mailbox' order by id`;
  t.same(
    audit.map((a) => a.action),
    ['mailbox.created', 'mailbox.created', 'mailbox.invited', 'mailbox.deleted', 'mailbox.created'],
  );
  t.match(audit[0], { actor_type: 'user', actor_id: owner.userId, resource_id: made.id, metadata: { address: made.address } });
  t.match(audit[3], { resource_id: made.id, metadata: { address: made.address } });
});

t.test('bad addresses are 422 naming address; nothing is written', async (t) => {
  const s = await buildTestApp(t);
  const { owner, domain } = await tenantWithDomain(s);
  const bad = [
    '',
    '   ',
    'plain',
    `@${domain}`,
    'user@',
    `a@b@${domain}`,
    `a%b@${domain}`,
    `a!b@${domain}`,
    `"quoted"@${domain}`,
    `"a b"@${domain}`,
    `a+tag@${domain}`,
    `.user@${domain}`,
    `user.@${domain}`,
    `us..er@${domain}`,
    `-user@${domain}`,
    `üser@${domain}`,
    `user name@${domain}`,
    `${'a'.repeat(65)}@${domain}`,
    `user@${domain}.`,
    'user@[192.0.2.1]',
    'user@192.0.2.1',
    `user@${domain}\r\nBcc: x@example.org`,
    `user\u200b@${domain}`,
    `(comment)user@${domain}`,
  ];
  for (const address of bad) {
    const res = await call(s.app, 'POST', '/mail/mailboxes', { token: owner.token, body: { address } });
    t.equal(res.status, 422, JSON.stringify(address));
    t.equal(res.body.error, 'validation_error');
    t.match(res.body.message, /^address/);
  }
  const name = await call(s.app, 'POST', '/mail/mailboxes', {
    token: owner.token,
    body: { address: `ok@${domain}`, display_name: 'Evil\r\nBcc: x@example.org' },
  });
  t.equal(name.status, 422);
  t.match(name.body.message, /^display_name/);
  t.equal((await call(s.app, 'POST', '/mail/mailboxes', { token: owner.token, body: { address: 42 } })).status, 422, 'not a string');
  t.equal((await call(s.app, 'POST', '/mail/mailboxes', { token: owner.token, body: {} })).status, 422, 'missing');
  const unknown = await call(s.app, 'POST', '/mail/mailboxes', { token: owner.token, body: { address: `ok@${domain}`, password: 'x' } });
  t.equal(unknown.status, 400, 'an unexpected field');
  t.equal(unknown.body.error, 'bad_request');
  t.equal((await call(s.app, 'POST', '/mail/mailboxes', { token: owner.token, raw: '{"address":' })).status, 400, 'malformed JSON');
  t.equal(await countRows(s.sql, 'mailboxes'), 0);
});

t.test('the domain must be a verified domain of the tenant', async (t) => {
  const s = await buildTestApp(t);
  const { owner: a } = await tenantWithDomain(s);
  const { domain: bDomain } = await tenantWithDomain(s);
  const pending = 'pending.example';
  await insertDomain(s.sql, a.tenantId, pending);

  const unverified = await call(s.app, 'POST', '/mail/mailboxes', { token: a.token, body: { address: `inbox@${pending}` } });
  t.equal(unverified.status, 422);
  t.match(unverified.body.message, /^address: pending\.example is not verified/);
  const foreign = await call(s.app, 'POST', '/mail/mailboxes', { token: a.token, body: { address: `inbox@${bDomain}` } });
  t.equal(foreign.status, 422, "another tenant's verified domain");
  t.match(foreign.body.message, /is not a domain of this account/);
  const unknown = await call(s.app, 'POST', '/mail/mailboxes', { token: a.token, body: { address: 'inbox@nowhere.example' } });
  t.equal(unknown.status, 422);
  t.match(unknown.body.message, /is not a domain of this account/);
  t.equal(await countRows(s.sql, 'mailboxes'), 0);
});

t.test('an address that is already a mailbox is 409, whatever its case', async (t) => {
  const s = await buildTestApp(t);
  const { owner, domain } = await tenantWithDomain(s);
  await createTestMailbox(s.app, owner.token, owner.tenantId, `dup@${domain}`);
  for (const address of [`dup@${domain}`, `DUP@${domain.toUpperCase()}`, ` dup@${domain}\t`]) {
    const res = await call(s.app, 'POST', '/mail/mailboxes', { token: owner.token, body: { address } });
    t.equal(res.status, 409, JSON.stringify(address));
    t.equal(res.body.error, 'conflict');
    t.match(res.body.message, `dup@${domain} is already a mailbox`);
  }
  t.equal(await countRows(s.sql, 'mailboxes'), 1);
});

t.test('an invite is a random token stored as its SHA-256, valid 72 hours; a new one ends the earlier unused ones', async (t) => {
  const s = await buildTestApp(t);
  const { owner, domain } = await tenantWithDomain(s);
  const box = await createTestMailbox(s.app, owner.token, owner.tenantId, `team@${domain}`);
  const before = Date.now();
  const first = await call(s.app, 'POST', `/mail/mailboxes/${box.id}/invite`, { token: owner.token });
  t.equal(first.status, 201);
  const invite = first.body.data;
  t.match(invite, { mailbox_id: box.id, address: box.address, token: /^mbi_[A-Za-z0-9_-]{43}$/, expires_at: String });
  const ttl = Date.parse(invite.expires_at) - before;
  t.ok(ttl >= 72 * 3600_000 && ttl < 72 * 3600_000 + 60_000, `expires in 72 h (${ttl} ms)`);
  const [row] = await s.sql<
    { token_hash: string; created_by: string | null; used_at: Date | null }[]
  >`select token_hash, created_by, used_at from mailbox_invites`;
  t.equal(row!.token_hash, createHash('sha256').update(invite.token).digest('hex'), 'only the hash is stored');
  t.equal(row!.created_by, owner.userId);
  t.notMatch(JSON.stringify(await s.sql`select * from mailbox_invites`), invite.token, 'the token is nowhere in the table');

  const second = await call(s.app, 'POST', `/mail/mailboxes/${box.id}/invite`, { token: owner.token });
  t.not(second.body.data.token, invite.token);
  // Open at the newest invite's creation (the app's clock), not at the database's now(): the two clocks are compared
  // nowhere else, and once (a loaded CI run) the count at now() still saw the replaced invite open.
  const open = await s.sql<{ n: number }[]>`
    select count(*)::int as n from mailbox_invites where used_at is null and expires_at > (select max(created_at) from mailbox_invites)`;
  t.equal(open[0]!.n, 1, 'only the newest invite is open');
  t.equal((await call(s.app, 'POST', `/mail/mailboxes/${box.id}/invite`, { token: owner.token, body: { ttl: 5 } })).status, 400, 'takes no body');
  t.equal((await call(s.app, 'POST', '/mail/mailboxes/8d7e2a4e-3c1b-4f7a-9e2d-5b6c7d8e9f00/invite', { token: owner.token })).status, 404);
});

t.test('callers: user sessions and unscoped keys; scoped keys 403; other tenants 404', async (t) => {
  const s = await buildTestApp(t);
  const { owner, other } = await twoTenants(s.app);
  const domain = await verifiedMailDomain(s.sql, owner.tenantId);
  const box = await createTestMailbox(s.app, owner.token, owner.tenantId, `ops@${domain}`);

  const unscoped = await createKey(s.app, owner);
  t.equal((await call(s.app, 'GET', '/mail/mailboxes', { token: unscoped.key })).status, 200, 'an unscoped key');
  const viaKey = await call(s.app, 'POST', '/mail/mailboxes', { token: unscoped.key, body: { address: `keyed@${domain}` } });
  t.equal(viaKey.status, 201);
  const keyAudit = await s.sql<{ actor_type: string; actor_id: string }[]>`
    select actor_type, actor_id from audit_events where resource_id = ${viaKey.body.data.id}`;
  t.same(keyAudit, [{ actor_type: 'api_key', actor_id: unscoped.id }]);

  const scoped = await createKey(s.app, owner, { scopes: ['domains:read', 'domains:write', 'events:read'] });
  for (const [method, url] of [
    ['GET', '/mail/mailboxes'],
    ['GET', `/mail/mailboxes/${box.id}`],
    ['POST', `/mail/mailboxes/${box.id}/invite`],
    ['DELETE', `/mail/mailboxes/${box.id}`],
  ] as const) {
    const res = await call(s.app, method, url, { token: scoped.key });
    t.equal(res.status, 403, `${method} ${url} with a scoped key`);
    t.equal(res.body.error, 'invalid_scope');
  }
  t.equal((await call(s.app, 'GET', '/mail/mailboxes')).status, 401, 'no credential');

  await assertForeign404(t, s.app, other.token, [
    { method: 'GET', url: `/mail/mailboxes/${box.id}` },
    { method: 'DELETE', url: `/mail/mailboxes/${box.id}` },
    { method: 'POST', url: `/mail/mailboxes/${box.id}/invite` },
  ]);
  const otherKey = await createKey(s.app, other);
  await assertForeign404(t, s.app, otherKey.key, [{ method: 'GET', url: `/mail/mailboxes/${box.id}` }]);
  const list = await call(s.app, 'GET', '/mail/mailboxes', { token: other.token });
  t.same(list.body.data, [], 'another tenant lists none');
  t.equal(list.body.total, 0);
  t.equal(await countRows(s.sql, 'mailbox_invites'), 0, 'no invite was made for the other tenant');
});
