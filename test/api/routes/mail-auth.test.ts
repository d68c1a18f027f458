// Mailbox invites consumed through the public route: the mailbox session and its limits, single use, expiry, bad input, races.
import t from 'tap';
import bcrypt from 'bcrypt';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, registerTenant, type TestApp } from '../../helpers/app.js';
import { createTestMailbox, deliverToMailbox, mailboxSession, verifiedMailDomain, type TestMailbox } from '../../helpers/inbound-rows.js';

const PASSWORD = 'Mailbox-pass-42';

async function setup(s: TestApp) {
  const owner = await registerTenant(s.app);
  const domain = await verifiedMailDomain(s.sql, owner.tenantId);
  const box = await createTestMailbox(s.app, owner.token, owner.tenantId, `inbox@${domain}`);
  const sibling = await createTestMailbox(s.app, owner.token, owner.tenantId, `other@${domain}`);
  return { owner, domain, box, sibling };
}

async function invite(s: TestApp, token: string, box: TestMailbox): Promise<string> {
  const res = await call(s.app, 'POST', `/mail/mailboxes/${box.id}/invite`, { token });
  if (res.status !== 201) throw new Error(`invite: ${res.status}`);
  return res.body.data.token;
}

const consume = (s: TestApp, body: unknown) => call(s.app, 'POST', '/auth/mail/invite/consume', { body });

t.test('consuming sets the password and returns a 24-hour session limited to the mailbox', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const token = await invite(s, owner.token, box);
  const before = Math.floor(Date.now() / 1000);
  const res = await consume(s, { token, new_password: PASSWORD });
  t.equal(res.status, 200);
  const session = res.body.data;
  t.match(session, { token: String, user_id: box.id, tenant_id: owner.tenantId, mailbox_id: box.id, address: box.address, expires_at: Number });
  t.ok(session.expires_at >= before + 86_400 && session.expires_at <= before + 86_400 + 60, '24 hours');
  const [row] = await s.sql<{ password_hash: string }[]>`select password_hash from mailboxes where id = ${box.id}`;
  t.ok(await bcrypt.compare(PASSWORD, row!.password_hash), 'bcrypt hash of the new password');
  t.equal((await call(s.app, 'GET', `/mail/mailboxes/${box.id}`, { token: owner.token })).body.data.password_set, true);
  const audit = await s.sql<{ action: string; actor_type: string }[]>`
    select action, actor_type from audit_events where resource_id = ${box.id} order by id`;
  t.same(
    audit.map((a) => a.action),
    ['mailbox.created', 'mailbox.invited', 'mailbox.invite_consumed'],
  );

  const list = await call(s.app, 'GET', '/mail/messages', { token: session.token });
  t.equal(list.status, 200, 'reads its mailbox without naming it');
  t.equal((await call(s.app, 'GET', `/mail/messages?mailbox_id=${box.id}`, { token: session.token })).status, 200);
});

t.test('a mailbox session sees its own mailbox only, and no other route', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box, sibling } = await setup(s);
  const mine = await deliverToMailbox(s.sql, box, { subject: 'mine' });
  const theirs = await deliverToMailbox(s.sql, sibling, { subject: 'theirs' });
  const session = await mailboxSession(s.app, owner.token, box.id);

  const list = await call(s.app, 'GET', '/mail/messages', { token: session });
  t.same(
    list.body.data.map((m: { id: string }) => m.id),
    [mine.messageId],
  );
  t.equal((await call(s.app, 'GET', `/mail/messages/${mine.messageId}`, { token: session })).status, 200);
  t.equal((await call(s.app, 'GET', `/mail/messages/${mine.messageId}/raw`, { token: session })).status, 200);
  t.equal((await call(s.app, 'PATCH', `/mail/messages/${mine.messageId}`, { token: session, body: { seen: true } })).status, 200);
  for (const [method, url, body] of [
    ['GET', `/mail/messages?mailbox_id=${sibling.id}`],
    ['GET', `/mail/messages/${theirs.messageId}`],
    ['GET', `/mail/messages/${theirs.messageId}/raw`],
    ['PATCH', `/mail/messages/${theirs.messageId}`, { seen: true }],
    ['DELETE', `/mail/messages/${theirs.messageId}`],
  ] as const) {
    const res = await call(s.app, method, url, { token: session, ...(body ? { body } : {}) });
    t.equal(res.status, 404, `${method} ${url} of a sibling mailbox`);
    t.equal(res.body.error, 'not_found');
  }
  t.equal((await s.sql`select seen from mailbox_messages where id = ${theirs.messageId}`)[0]!.seen, false, "the sibling's message is untouched");
  t.equal((await call(s.app, 'DELETE', `/mail/messages/${mine.messageId}`, { token: session })).status, 200, 'deletes its own');

  // Every other route in the OpenAPI document that takes a credential refuses it: the default is closed.
  const doc = (await call(s.app, 'GET', '/openapi.json')).body;
  const fakeId = '0b9c4d2e-1f3a-4b5c-8d6e-7f8091a2b3c4';
  let checked = 0;
  for (const [path, ops] of Object.entries<Record<string, { security?: unknown[] }>>(doc.paths)) {
    if (path.startsWith('/mail/messages')) continue;
    for (const [method, op] of Object.entries(ops)) {
      if (!op.security?.length) continue;
      const url = path.replace(/\{[^}]+\}/g, fakeId);
      const res = await call(s.app, method.toUpperCase() as 'GET', url, { token: session, ...(method === 'get' || method === 'delete' ? {} : { body: {} }) });
      t.equal(res.status, 403, `${method.toUpperCase()} ${path} refuses a mailbox session`);
      t.equal(res.body.error, 'forbidden');
      checked++;
    }
  }
  t.ok(checked >= 20, `checked ${checked} routes`);
});

t.test('single use: a second consume is 410; an unknown token 404; a replaced invite 410', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const token = await invite(s, owner.token, box);
  t.equal((await consume(s, { token, new_password: PASSWORD })).status, 200);
  const again = await consume(s, { token, new_password: 'Another-pass-77' });
  t.equal(again.status, 410);
  t.equal(again.body.error, 'gone');
  const unknown = await consume(s, { token: `mbi_${'A'.repeat(43)}`, new_password: PASSWORD });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error, 'not_found');

  const old = await invite(s, owner.token, box);
  const fresh = await invite(s, owner.token, box);
  t.equal((await consume(s, { token: old, new_password: PASSWORD })).status, 410, 'replaced by a newer invite');
  t.equal((await consume(s, { token: fresh, new_password: PASSWORD })).status, 200);
});

t.test('bad input is 400 (malformed, unexpected field) or 422 (missing, weak password) and consumes nothing', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const token = await invite(s, owner.token, box);
  const malformed = await call(s.app, 'POST', '/auth/mail/invite/consume', { raw: '{"token":' });
  t.equal(malformed.status, 400);
  t.equal(malformed.body.error, 'bad_request');
  t.equal((await consume(s, { token, new_password: PASSWORD, password: PASSWORD })).status, 400, 'unexpected field');
  t.equal((await consume(s, [token])).status, 400, 'not an object');
  const missing = await consume(s, { token });
  t.equal(missing.status, 422);
  t.match(missing.body.message, /^new_password/);
  t.match((await consume(s, { token: '', new_password: PASSWORD })).body.message, /^token/);
  for (const weak of ['short1A', 'alllowercaseletters', 'password123', 'Inbox-inbox-1']) {
    const res = await consume(s, { token, new_password: weak });
    t.equal(res.status, 422, `weak password ${weak}`);
    t.match(res.body.message, /^new_password/);
  }
  const [row] = await s.sql<{ used_at: Date | null }[]>`select used_at from mailbox_invites`;
  t.equal(row!.used_at, null, 'still unused');
  t.equal((await consume(s, { token, new_password: PASSWORD })).status, 200, 'and still consumable');
});

t.test('concurrent consumes of one token: exactly one wins', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const token = await invite(s, owner.token, box);
  const results = await Promise.all(Array.from({ length: 6 }, (_, i) => consume(s, { token, new_password: `Racer-pass-${i}x` })));
  const statuses = results.map((r) => r.status).sort();
  t.same(statuses, [200, 410, 410, 410, 410, 410]);
  const winner = results.find((r) => r.status === 200)!;
  const index = results.indexOf(winner);
  const [row] = await s.sql<{ password_hash: string }[]>`select password_hash from mailboxes where id = ${box.id}`;
  t.ok(await bcrypt.compare(`Racer-pass-${index}x`, row!.password_hash), "the winner's password is the one set");
  t.equal((await s.sql`select count(*)::int as n from audit_events where action = 'mailbox.invite_consumed'`)[0]!.n, 1);
});

t.test('expiry, password reset and deletion end invites and sessions (injected clock)', async (t) => {
  const clock = new ManualClock(new Date('2026-03-02T09:00:00Z'));
  const s = await buildTestApp(t, { clock });
  const { owner, box } = await setup(s);

  const expiring = await invite(s, owner.token, box);
  clock.advance(72 * 3600_000 + 1000);
  const expired = await consume(s, { token: expiring, new_password: PASSWORD });
  t.equal(expired.status, 410, 'after 72 hours');
  t.equal(expired.body.error, 'gone');

  const owner2 = await call(s.app, 'POST', '/auth/login', { body: { email: owner.email, password: owner.password } });
  const ownerToken = owner2.body.data.token;
  const session = await mailboxSession(s.app, ownerToken, box.id);
  clock.advance(24 * 3600_000 - 1000);
  t.equal((await call(s.app, 'GET', '/mail/messages', { token: session })).status, 200, 'valid just under 24 hours');
  clock.advance(2000);
  t.equal((await call(s.app, 'GET', '/mail/messages', { token: session })).status, 401, 'expired after 24 hours');

  const ownerToken3 = (await call(s.app, 'POST', '/auth/login', { body: { email: owner.email, password: owner.password } })).body.data.token;
  const first = await mailboxSession(s.app, ownerToken3, box.id);
  clock.advance(2000);
  const second = await mailboxSession(s.app, ownerToken3, box.id, 'Newer-pass-99');
  t.equal((await call(s.app, 'GET', '/mail/messages', { token: first })).status, 401, 'a password set anew ends older sessions');
  t.equal((await call(s.app, 'GET', '/mail/messages', { token: second })).status, 200);
  clock.advance(300);
  const third = await mailboxSession(s.app, ownerToken3, box.id, 'Newest-pass-99');
  t.equal((await call(s.app, 'GET', '/mail/messages', { token: second })).status, 401, 'even within the same second, a newer password ends the older session');
  t.equal((await call(s.app, 'GET', '/mail/messages', { token: third })).status, 200);

  t.equal((await call(s.app, 'DELETE', `/mail/mailboxes/${box.id}`, { token: ownerToken3 })).status, 200);
  t.equal((await call(s.app, 'GET', '/mail/messages', { token: third })).status, 401, 'a deleted mailbox ends its sessions');
});

t.test('a mailbox session is not a user session, and a user session is not a mailbox session', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const session = await mailboxSession(s.app, owner.token, box.id);
  const whoami = await call(s.app, 'GET', '/whoami', { token: session });
  t.equal(whoami.status, 403);
  const tampered = session.slice(0, -2) + (session.endsWith('AA') ? 'BB' : 'AA');
  t.equal((await call(s.app, 'GET', '/mail/messages', { token: tampered })).status, 401, 'a tampered signature');
  t.equal((await call(s.app, 'GET', '/mail/messages', { token: owner.token })).status, 422, 'the owner must name a mailbox');
});
