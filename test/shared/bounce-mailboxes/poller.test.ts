// The POP3 bounce-mailbox poller against a real dovecot on loopback: new messages by UIDL fed to the bounce intake once (also by a fresh poller), delete_after_read, the tenant confinement, big messages, dot-stuffing, failures recorded.
import t from 'tap';
import { pollDueMailboxes, pollMailbox, type PollerDeps } from '../../../shared/bounce-mailboxes/poller.js';
import { createBounceMailbox } from '../../../shared/bounce-mailboxes/service.js';
import { findBounceMailbox } from '../../../shared/bounce-mailboxes/queries.js';
import { INBOUND_BOUNCE_JOBS } from '../../../shared/inbound/jobs.js';
import { startDovecot } from '../../helpers/dovecot.js';
import { intakeFixture } from '../../mta/outbound/bounces/intake-fixture.js';
import type { TestLike } from '../../helpers/app.js';

const actor = { type: 'system' as const, id: null };
const HOUR = 3_600_000;

async function setup(t: TestLike) {
  const f = await intakeFixture(t, { env: { MAILPATH_CONFIG__BOUNCE_MAILBOXES__ALLOW_PRIVATE_ADDRESSES: 'true' } });
  const pop = await startDovecot(t, { 'bounces@isp.test': 'pop-secret-1' });
  // Polls happen "later": each call sees every mailbox due again.
  let offset = 0;
  const later = { now: () => new Date(Date.now() + offset) };
  const deps = (over: Partial<PollerDeps> = {}): PollerDeps => {
    offset += HOUR;
    return { sql: f.sql, boss: f.boss, clock: later, log: f.ctx.log, dns: f.ctx.dns, vault: f.ctx.vault, config: f.config, ...over };
  };
  const sender = await f.sender();
  const mailbox = (over: Record<string, unknown> = {}) =>
    createBounceMailbox(f.ctx, sender.tenant.id, actor, {
      name: 'ISP bounces',
      host: '127.0.0.1',
      port: pop.port,
      username: 'bounces@isp.test',
      password: 'pop-secret-1',
      use_tls_implicit: false,
      ...over,
    });
  /** The bounce recipients stored from this mailbox's messages, oldest first. */
  const stored = () =>
    f.sql<{ id: string; recipient: string; tenant_id: string | null; raw: Buffer }[]>`
      select r.id, r.recipient, r.tenant_id, m.raw from inbound_recipients r join inbound_messages m on m.id = r.message_id
      where r.kind = 'bounce' order by m.received_at, m.id`;
  return { f, pop, deps, sender, mailbox, stored };
}

t.test('new messages are stored once as bounce mail of the tenant and handed to the intake; a fresh poller fetches nothing again', async (t) => {
  const { f, pop, deps, sender, mailbox, stored } = await setup(t);
  const hard = await f.delivered(sender);
  const complained = await f.delivered(sender);
  pop.deliver('bounces@isp.test', Buffer.concat([Buffer.from(`Delivered-To: ${hard.verp}\r\n`), f.sample('dsn-gmail-5.1.1.eml', hard)]));
  pop.deliver('bounces@isp.test', f.sample('arf-yahoo.eml', complained));
  const box = await mailbox();

  const first = await pollDueMailboxes(deps());
  t.same(first, { polled: 1, fetched: 2, failed: 0 });
  const rows = await stored();
  t.equal(rows.length, 2, 'two bounce recipients stored');
  t.ok(rows.every((r) => r.tenant_id === sender.tenant.id), 'each names the mailbox\'s tenant');
  t.equal(rows[0]!.recipient, hard.verp.toLowerCase(), 'the recipient is the Delivered-To address (the VERP address)');
  t.equal(rows[1]!.recipient, 'bounces@isp.test', 'without a delivery header: the mailbox\'s user name');
  const [jobs] = await f.sql<{ n: number }[]>`select count(*)::int as n from pgboss.job where name = ${INBOUND_BOUNCE_JOBS}`;
  t.equal(jobs!.n, 2, 'one intake job per message, as the MX enqueues');

  // The intake as the outbound role runs it for those jobs.
  t.equal(await f.run(rows[0]!.id), 'bounce_hard');
  t.equal(await f.run(rows[1]!.id), 'complaint');
  t.equal((await f.state(hard)).status, 'bounced');
  t.match((await f.state(complained)).suppressions, [{ reason: 'complaint' }]);

  const again = await pollMailbox(deps(), (await findBounceMailbox(f.sql, sender.tenant.id, box.id))!);
  t.match(again, { fetched: 0, already_fetched: 2, deleted: 0, error: null }, 'a second poll (a restarted process: state is in the database) fetches nothing');
  t.equal((await stored()).length, 2);
  t.equal(pop.count('bounces@isp.test'), 2, 'without delete_after_read the messages stay on the server');
  const row = (await findBounceMailbox(f.sql, sender.tenant.id, box.id))!;
  t.equal(row.messages_fetched, 2);
  t.equal(row.last_poll_error, null);
  t.ok(row.last_polled_at, 'last_polled_at set');
  t.ok(row.next_poll_at.getTime() > Date.now() + 2 * HOUR, 'the next poll is poll_interval_s after this one (on the poller\'s clock)');
});

t.test('a report about another tenant\'s send, fetched from this tenant\'s mailbox, changes nothing', async (t) => {
  const { f, pop, deps, mailbox, stored } = await setup(t);
  const stranger = await f.sender();
  const theirs = await f.delivered(stranger);
  pop.deliver('bounces@isp.test', f.sample('dsn-postfix-5.1.1.eml', theirs));
  await mailbox();
  t.match(await pollDueMailboxes(deps()), { fetched: 1 });
  const [row] = await stored();
  t.equal(await f.run(row!.id), 'foreign');
  t.equal((await f.state(theirs)).status, 'delivered', 'the other tenant\'s send is not bounced');
  t.same((await f.state(theirs)).suppressions, [], 'nor its recipient suppressed');
});

t.test('delete_after_read deletes on the server at the end of the session; the UIDLs are then forgotten', async (t) => {
  const { f, pop, deps, sender, mailbox } = await setup(t);
  for (let i = 0; i < 3; i++) pop.deliver('bounces@isp.test', f.sample('dsn-gmail-5.1.1.eml', await f.delivered(sender)));
  const box = await mailbox({ delete_after_read: true });
  t.match(await pollDueMailboxes(deps()), { fetched: 3 });
  t.equal(pop.count('bounces@isp.test'), 0, 'deleted on the server');
  const count = async () => (await f.sql<{ n: number }[]>`select count(*)::int as n from bounce_mailbox_uidls where mailbox_id = ${box.id}`)[0]!.n;
  t.equal(await count(), 3, 'remembered until the server no longer lists them');
  pop.deliver('bounces@isp.test', f.sample('dsn-gmail-5.1.1.eml', await f.delivered(sender)));
  t.match(await pollDueMailboxes(deps()), { fetched: 1 });
  t.equal(await count(), 1, 'the next poll forgets the deleted ones');
});

t.test('a message is stored byte for byte (dot-stuffing undone); a message over max_message_bytes is skipped once', async (t) => {
  const { f, pop, deps, mailbox, stored } = await setup(t);
  const text = 'From: MAILER-DAEMON@isp.test\r\nSubject: Undelivered\r\n\r\n.a line starting with a dot\r\n..two dots\r\n.\r\nend\r\n';
  pop.deliver('bounces@isp.test', text);
  pop.deliver('bounces@isp.test', `Subject: big\r\n\r\n${'x'.repeat(5000)}\r\n`);
  const box = await mailbox();
  const small = { ...f.config, bounceMailboxes: { ...f.config.bounceMailboxes, max_message_bytes: 2048 } };
  t.match(await pollMailbox(deps({ config: small }), box), { fetched: 1, skipped_too_big: 1, error: null });
  const rows = await stored();
  t.equal(rows.length, 1);
  t.equal(rows[0]!.raw.toString('utf8'), text, 'the stored message is the delivered one');
  t.match(await pollMailbox(deps({ config: small }), box), { fetched: 0, skipped_too_big: 0, already_fetched: 2 }, 'the big one is not tried again');
});

t.test('at most max_messages_per_poll are fetched per poll; the rest come at the next', async (t) => {
  const { f, pop, deps, mailbox, stored } = await setup(t);
  for (let i = 0; i < 5; i++) pop.deliver('bounces@isp.test', `Subject: n${i}\r\n\r\nbody ${i}\r\n`);
  const box = await mailbox();
  const two = { ...f.config, bounceMailboxes: { ...f.config.bounceMailboxes, max_messages_per_poll: 2 } };
  t.match(await pollMailbox(deps({ config: two }), box), { fetched: 2 });
  t.match(await pollMailbox(deps({ config: two }), box), { fetched: 2, already_fetched: 2 });
  t.match(await pollMailbox(deps({ config: two }), box), { fetched: 1, already_fetched: 4 });
  t.equal((await stored()).length, 5);
});

t.test('failures are recorded on the mailbox, never thrown: a refused login, a closed port, a disabled mailbox is not polled', async (t) => {
  const { f, deps, sender, mailbox } = await setup(t);
  const wrong = await mailbox({ password: 'not-the-password' });
  const result = await pollMailbox(deps(), wrong);
  t.match(result, { fetched: 0, error: /^login: / });
  const row = (await findBounceMailbox(f.sql, sender.tenant.id, wrong.id))!;
  t.match(row.last_poll_error, /^login: /);
  t.ok(row.next_poll_at.getTime() > Date.now(), 'polled again after its interval, not at once');

  const closed = await mailbox({ port: 1 });
  t.match(await pollMailbox(deps(), closed), { error: /^login: ECONNREFUSED/ });

  await f.sql`update bounce_mailboxes set enabled = false`;
  t.same(await pollDueMailboxes(deps()), { polled: 0, fetched: 0, failed: 0 }, 'disabled mailboxes are not claimed');
});

t.test('two pollers at once: each due mailbox is claimed by one of them', async (t) => {
  const { pop, deps, mailbox, stored } = await setup(t);
  pop.deliver('bounces@isp.test', 'Subject: one\r\n\r\nbody\r\n');
  await mailbox();
  const shared = deps();
  const [a, b] = await Promise.all([pollDueMailboxes(shared), pollDueMailboxes(shared)]);
  t.equal(a.polled + b.polled, 1, 'claimed once');
  t.equal((await stored()).length, 1, 'stored once');
});
