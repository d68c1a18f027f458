// The POP3 bounce-mailbox poller against a real dovecot on loopback: new messages by UIDL fed to the bounce intake once (also by a fresh poller),
// delete_after_read, the tenant confinement, big messages, dot-stuffing, failures recorded.
import t from 'tap';
import { MAX_BACKOFF_S, nextPollAt, pollDueMailboxes, pollMailbox, type PollerDeps } from '../../../../shared/delivery/bounce-mailboxes/poller.js';
import { createBounceMailbox } from '../../../../shared/delivery/bounce-mailboxes/service.js';
import { findBounceMailbox } from '../../../../shared/delivery/bounce-mailboxes/queries.js';
import { INBOUND_BOUNCE_JOBS } from '../../../../shared/inbound/jobs.js';
import { startDovecot } from '../../../helpers/dovecot.js';
import { loggingIn, ROGUE_GREETINGS, startRoguePop3 } from '../../../helpers/rogue-pop3.js';
import type { RogueScript } from '../../../helpers/rogue-server.js';
import { intakeFixture } from '../../../jobs/bounce-intake/intake-fixture.js';
import type { TestLike } from '../../../helpers/app.js';

const actor = { type: 'system' as const, id: null };
const HOUR = 3_600_000;

async function setup(t: TestLike, env: Record<string, string> = {}) {
  const f = await intakeFixture(t, { env: { MAILPATH_CONFIG__BOUNCE_MAILBOXES__ALLOW_PRIVATE_ADDRESSES: 'true', ...env } });
  const pop = await startDovecot(t, { 'bounces@isp.test': 'pop-secret-1' });
  // Polls happen "later": each call sees every mailbox due again.
  let offset = 0;
  const later = { now: () => new Date(Date.now() + offset) };
  const deps = (over: Partial<PollerDeps> = {}): PollerDeps => {
    offset += HOUR;
    return { sql: f.sql, boss: f.boss, clock: later, log: f.ctx.log, openMailbox: f.ctx.openMailbox, config: f.config, ...over };
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
  t.ok(
    rows.every((r) => r.tenant_id === sender.tenant.id),
    "each names the mailbox's tenant",
  );
  t.equal(rows[0]!.recipient, hard.verp.toLowerCase(), 'the recipient is the Delivered-To address (the VERP address)');
  t.equal(rows[1]!.recipient, 'bounces@isp.test', "without a delivery header: the mailbox's user name");
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
  t.ok(row.next_poll_at.getTime() > Date.now() + 2 * HOUR, "the next poll is poll_interval_s after this one (on the poller's clock)");
});

t.test("a report about another tenant's send, fetched from this tenant's mailbox, changes nothing", async (t) => {
  const { f, pop, deps, mailbox, stored } = await setup(t);
  const stranger = await f.sender();
  const theirs = await f.delivered(stranger);
  pop.deliver('bounces@isp.test', f.sample('dsn-postfix-5.1.1.eml', theirs));
  await mailbox();
  t.match(await pollDueMailboxes(deps()), { fetched: 1 });
  const [row] = await stored();
  t.equal(await f.run(row!.id), 'foreign');
  t.equal((await f.state(theirs)).status, 'delivered', "the other tenant's send is not bounced");
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

t.test("one tenant's slow mailboxes take their turn beside another tenant's, not ahead of it", async (t) => {
  const { f, pop, deps, sender, mailbox } = await setup(t, { MAILPATH_CONFIG__BOUNCE_MAILBOXES__TIMEOUT_MS: '1500' });
  const slow = await startRoguePop3(t, { greet: (s, c) => c.drip(s, `+OK ${'slow '.repeat(200)}\r\n`, 1000) });
  const hostile = [];
  for (let i = 0; i < 3; i++) hostile.push(await mailbox({ name: `slow ${i}`, port: slow.port }));
  // The other tenant's mailbox is the last one due: taken one after the other, it would wait behind all three.
  pop.deliver('bounces@isp.test', 'Subject: one\r\n\r\nbody\r\n');
  const other = await f.sender();
  const good = await createBounceMailbox(f.ctx, other.tenant.id, actor, {
    name: 'Other tenant',
    host: '127.0.0.1',
    port: pop.port,
    username: 'bounces@isp.test',
    password: 'pop-secret-1',
    use_tls_implicit: false,
  });
  const tick = await pollDueMailboxes(deps());
  t.same(tick, { polled: 3, fetched: 1, failed: 2 }, "two of the slow tenant's mailboxes (mailboxes_per_tenant_per_tick) and the other tenant's");
  const rows = await Promise.all(hostile.map(async (m) => (await findBounceMailbox(f.sql, sender.tenant.id, m.id))!));
  t.equal(rows.filter((r) => r.last_polled_at === null).length, 1, "the slow tenant's third mailbox waits for a later tick");
  const done = (await findBounceMailbox(f.sql, other.tenant.id, good.id))!;
  const slowDone = rows.filter((r) => r.last_polled_at !== null).map((r) => r.last_polled_at!.getTime());
  t.ok(done.last_polled_at!.getTime() < Math.min(...slowDone), "the other tenant's poll finished before the slow ones gave up (they ran at once)");
});

/** Servers that log in fine, then misbehave in the middle of the session. */
const SESSION_ROGUES: { name: string; script: RogueScript; tls?: boolean; error: RegExp }[] = [
  {
    name: 'an endless UIDL listing',
    script: loggingIn((line, s, c) => line === 'UIDL' && (c.flood(s, '+OK\r\n', 5 * 1024 * 1024), true)),
    error: /^UIDL: the answer is larger than 4194304 bytes$/,
  },
  {
    name: 'a message far bigger than listed',
    script: loggingIn((line, s, c) => line === 'RETR 1' && (c.flood(s, '+OK\r\n', 2 * 1024 * 1024), true)),
    error: /^RETR: the answer is larger than 1048576 bytes$/,
  },
  {
    name: 'a message dripping one byte a second',
    script: loggingIn((line, s, c) => line === 'RETR 1' && (s.write('+OK\r\n'), c.drip(s, 'Subject: slow\r\n\r\nbody\r\n.\r\n', 1000), true)),
    error: /^RETR: the server did not answer within 2 s$/,
  },
  {
    name: 'a close in the middle of a message',
    script: loggingIn((line, s) => line === 'RETR 1' && (s.end('+OK\r\nSubject: cut\r\n\r\nhalf a bo'), true)),
    error: /^RETR: the server closed the connection$/,
  },
  {
    name: 'garbage in the middle of the session',
    script: loggingIn((line, s) => line === 'LIST' && (s.write('250 OK\r\n'), true)),
    error: /^LIST: the server's answer is not POP3/,
  },
];

t.test('misbehaving servers: each poll fails and is recorded on the mailbox, nothing half-fetched is stored, and the process lives on', async (t) => {
  const { f, deps, sender, mailbox, stored } = await setup(t, {
    MAILPATH_CONFIG__BOUNCE_MAILBOXES__TIMEOUT_MS: '2000',
    MAILPATH_CONFIG__BOUNCE_MAILBOXES__MAX_MESSAGE_BYTES: '1048576',
  });
  for (const rogue of [...ROGUE_GREETINGS, ...SESSION_ROGUES]) {
    const server = await startRoguePop3(t, rogue.script);
    const box = await mailbox({ name: rogue.name, port: server.port, use_tls_implicit: rogue.tls ?? false });
    // The error names the limit that ended the poll (a timeout, a size cap, a closed connection): a hang would time the file out.
    const result = await pollMailbox(deps(), box);
    t.match(result, { fetched: 0, error: rogue.error }, `${rogue.name}: ${result.error}`);
    const row = (await findBounceMailbox(f.sql, sender.tenant.id, box.id))!;
    t.match(row.last_poll_error, rogue.error, `${rogue.name}: recorded as last_poll_error`);
    t.equal(row.consecutive_poll_failures, 1, `${rogue.name}: counted`);
  }
  t.equal((await stored()).length, 0, 'nothing was stored from a broken session');
  const uidls = await f.sql`select 1 from bounce_mailbox_uidls`;
  t.equal(uidls.length, 0, 'nor any UIDL marked fetched (the next poll tries again)');
});

t.test('a mailbox failing poll after poll waits longer each time (up to a day); a poll that works resets the wait', async (t) => {
  const { f, pop, deps, sender, mailbox } = await setup(t);
  const server = await startRoguePop3(t, ROGUE_GREETINGS[0]!.script);
  const box = await mailbox({ port: server.port, poll_interval_s: 300 });
  const waits: number[] = [];
  for (let i = 1; i <= 4; i++) {
    await pollMailbox(deps(), (await findBounceMailbox(f.sql, sender.tenant.id, box.id))!);
    const row = (await findBounceMailbox(f.sql, sender.tenant.id, box.id))!;
    t.equal(row.consecutive_poll_failures, i);
    t.match(row.last_poll_error, /go away/);
    waits.push((row.next_poll_at.getTime() - row.last_polled_at!.getTime()) / 1000);
  }
  t.same(waits, [600, 1200, 2400, 4800], 'poll_interval_s doubled per failure in a row');

  pop.deliver('bounces@isp.test', 'Subject: one\r\n\r\nbody\r\n');
  await f.sql`update bounce_mailboxes set port = ${pop.port} where id = ${box.id}`;
  t.match(await pollMailbox(deps(), (await findBounceMailbox(f.sql, sender.tenant.id, box.id))!), { fetched: 1, error: null });
  const fixed = (await findBounceMailbox(f.sql, sender.tenant.id, box.id))!;
  t.same([fixed.consecutive_poll_failures, fixed.last_poll_error], [0, null], 'a poll that works clears the failure');
  t.equal((fixed.next_poll_at.getTime() - fixed.last_polled_at!.getTime()) / 1000, 300, 'and the interval is back to poll_interval_s');

  const at = new Date(0);
  t.equal(nextPollAt(at, 300, 20).getTime() / 1000, MAX_BACKOFF_S, 'the wait is capped at a day');
  t.equal(nextPollAt(at, 300, 1000).getTime() / 1000, MAX_BACKOFF_S, 'however many failures');
  t.equal(nextPollAt(at, 86_400, 3).getTime() / 1000, 86_400, 'an interval of a day stays a day');
});

t.test('an answer arriving one byte at a time (every split of a line, a stuffed dot and the terminator) is read whole', async (t) => {
  const { deps, mailbox, stored } = await setup(t);
  const message = 'Subject: split\r\n\r\n.a line with a dot\r\n..\r\nend\n';
  const wire = `+OK\r\n${message.replace(/^\./gm, '..')}.\r\n`;
  const server = await startRoguePop3(
    t,
    loggingIn((line, s, c) => line === 'RETR 1' && (c.drip(s, wire, 1), true), Buffer.byteLength(message)),
  );
  const box = await mailbox({ port: server.port });
  t.match(await pollMailbox(deps(), box), { fetched: 1, error: null });
  const [row] = await stored();
  t.equal(row!.raw.toString('latin1'), message, 'byte for byte, dot-stuffing undone, a bare LF kept');
});

t.test('a server answering each command just inside timeout_ms holds a poll no longer than its budget; the rest come at the next poll', async (t) => {
  const { f, deps, mailbox, stored } = await setup(t, { MAILPATH_CONFIG__BOUNCE_MAILBOXES__TIMEOUT_MS: '1000' });
  const count = 10;
  const body = (n: string) => `Subject: slow ${n}\r\n\r\nbody\r\n`;
  const server = await startRoguePop3(t, {
    greet: (s) => s.write('+OK slow but valid\r\n'),
    command(line, s) {
      const [verb, arg] = line.split(' ');
      const list = (value: (n: number) => string) => `+OK\r\n${Array.from({ length: count }, (_, i) => `${i + 1} ${value(i + 1)}\r\n`).join('')}.\r\n`;
      if (verb === 'USER' || verb === 'PASS') s.write('+OK\r\n');
      else if (verb === 'UIDL') s.write(list((n) => `slow-${n}`));
      else if (verb === 'LIST') s.write(list((n) => String(body(String(n)).length)));
      // Each message just inside the 1 s timeout: no single command is late, the whole poll would be 7 s.
      else if (verb === 'RETR') setTimeout(() => !s.destroyed && s.write(`+OK\r\n${body(arg!)}.\r\n`), 700);
      else if (verb === 'QUIT') s.end('+OK bye\r\n');
      else s.write('-ERR no\r\n');
    },
  });
  const box = await mailbox({ port: server.port });
  const first = await pollMailbox(deps(), box);
  t.equal(first.error, null, 'not a failure: a slow server is served in parts');
  t.ok(first.fetched >= 1 && first.fetched < count, `some fetched now (${first.fetched}), the rest later`);
  const second = await pollMailbox(deps(), (await findBounceMailbox(f.sql, box.tenant_id, box.id))!);
  t.equal(second.already_fetched, first.fetched, 'the next poll goes on from there');
  t.equal((await stored()).length, first.fetched + second.fetched, 'each stored once');
});
