// Bounce intake's guarantees: forged VERP addresses and test-mode sends change nothing, a job run twice (or two reports of one bounce) records once, and a
// report never touches another tenant.
import { randomBytes, randomUUID } from 'node:crypto';
import t, { type Test } from 'tap';
import { bounceAddress, verpKey } from '../../../shared/sending/outbound-log/verp.js';
import { intakeFixture, type TestSend } from './intake-fixture.js';

const f = await intakeFixture(t);
const nothing = async (t: Test, send: TestSend, status = 'delivered') => {
  const after = await f.state(send);
  t.equal(after.status, status, 'status unchanged');
  t.same(after.events, [], 'no event');
  t.same(after.suppressions, [], 'no suppression');
};

t.test('a forged VERP address maps nothing, even with a real Message-ID inside', async (t) => {
  const send = await f.delivered(await f.sender());
  const forgedKey = bounceAddress(verpKey(randomBytes(32)), send.id, f.config.hostname);
  const [local] = send.verp.split('@');
  const flipped = `${local!.slice(0, -1)}${local!.endsWith('0') ? '1' : '0'}@${f.config.hostname}`;
  for (const address of [forgedKey, flipped]) {
    const rcptId = await f.receive(address, f.sample('dsn-gmail-5.1.1.eml', send, { VERP: address }));
    t.equal(await f.run(rcptId), 'forged', address);
    t.match(await f.recipientRow(rcptId), { tenant_id: null, outcome: 'forged', send_id: null }, 'handled, not attributed');
    t.equal(await f.run(rcptId), 'duplicate', 'and not tried again');
  }
  await nothing(t, send);
});

t.test('a job run twice, one after the other or at once, records once', async (t) => {
  const from = await f.sender();
  const bounced = await f.delivered(from);
  const dsn = await f.receive(bounced.verp, f.sample('dsn-postfix-5.1.1.eml', bounced));
  t.same(await Promise.all([f.run(dsn), f.run(dsn)]).then((r) => r.sort()), ['bounce_hard', 'duplicate']);
  t.equal(await f.run(dsn), 'duplicate');
  const after = await f.state(bounced);
  t.equal(after.events.length, 1, 'one bounce event');
  t.equal(after.suppressions.length, 1, 'one suppression');

  const complained = await f.delivered(from);
  const arf = await f.receive(f.fbl, f.sample('arf-aol.eml', complained));
  t.same(await Promise.all([f.run(arf), f.run(arf)]).then((r) => r.sort()), ['complaint', 'duplicate']);
  t.equal((await f.state(complained)).events.length, 1, 'one complaint event');
});

t.test('a second report of the same bounce or complaint adds nothing', async (t) => {
  const from = await f.sender();
  const send = await f.delivered(from);
  t.equal(await f.run(await f.receive(send.verp, f.sample('dsn-gmail-5.1.1.eml', send))), 'bounce_hard');
  t.equal(await f.run(await f.receive(send.verp, f.sample('dsn-postfix-5.1.1.eml', send))), 'already_bounced');
  t.equal(await f.run(await f.receive(send.verp, f.sample('dsn-delayed-4.4.1.eml', send))), 'already_bounced', 'a late warning too');
  t.match((await f.state(send)).events, [{ type: 'bounce', subtype: 'hard' }]);
  t.equal((await f.state(send)).events.length, 1);

  const other = await f.delivered(from);
  t.equal(await f.run(await f.receive(f.fbl, f.sample('arf-yahoo.eml', other))), 'complaint');
  t.equal(await f.run(await f.receive(f.fbl, f.sample('arf-yahoo.eml', other))), 'already_complained');
  t.equal((await f.state(other)).events.length, 1);
  t.equal((await f.state(other)).suppressions.length, 1);
});

t.test('reports about a test-mode send change nothing', async (t) => {
  const from = await f.sender();
  const send = await f.delivered(from, { mode: 'test' });
  t.equal((await f.state(send)).status, 'simulated');
  for (const [rcpt, name] of [
    [send.verp, 'dsn-gmail-5.1.1.eml'],
    [f.fbl, 'arf-yahoo.eml'],
    [f.fbl, 'arf-microsoft-jmrp.eml'],
  ] as const) {
    const rcptId = await f.receive(rcpt, f.sample(name, send));
    t.equal(await f.run(rcptId), 'test_send', name);
    t.match(await f.recipientRow(rcptId), { outcome: 'test_send', send_id: send.id });
  }
  await nothing(t, send, 'simulated');
});

t.test("a report about tenant A's send never reaches tenant B", async (t) => {
  const [a, b] = [await f.sender(), await f.sender()];
  const to = `shared-${randomUUID().slice(0, 8)}@dest.example`;
  const sendA = await f.delivered(a, { to });
  const sendB = await f.delivered(b, { to });
  t.equal(await f.run(await f.receive(sendA.verp, f.sample('dsn-gmail-5.1.1.eml', sendA))), 'bounce_hard');
  const suppressions = await f.sql<{ tenant_id: string }[]>`select tenant_id from suppressions where email = ${to}`;
  t.same(
    suppressions.map((s) => s.tenant_id),
    [a.tenant.id],
    'suppressed for A only',
  );
  t.equal((await f.state(sendB)).status, 'delivered', "B's send untouched");
  t.equal(await f.run(await f.receive(f.fbl, f.sample('arf-aol.eml', sendB))), 'complaint');
  const [eventsA, eventsB] = [(await f.state(sendA)).events, (await f.state(sendB)).events];
  t.same([eventsA.map((e) => e.type), eventsB.map((e) => e.type)], [['bounce'], ['complaint']]);
  const byTenant = await f.sql<{ tenant_id: string; reason: string }[]>`select tenant_id, reason from suppressions where email = ${to} order by reason`;
  t.same(byTenant, [
    { tenant_id: b.tenant.id, reason: 'complaint' },
    { tenant_id: a.tenant.id, reason: 'hard_bounce' },
  ]);
});

t.test('a Message-ID several sends share maps only when the reported recipient tells them apart', async (t) => {
  const [a, b] = [await f.sender(), await f.sender()];
  const messageId = `${randomUUID()}@shared.example`;
  const raw = (from: string) => ({
    kind: 'raw' as const,
    subject: 'Hello',
    messageId,
    bytes: Buffer.from(`From: ${from}\r\nSubject: Hello\r\nMessage-ID: <${messageId}>\r\n\r\nHi\r\n`),
  });
  const sendA = await f.delivered(a, { content: raw(`news@${a.domain.name}`), source: 'smtp' });
  const sendB = await f.delivered(b, { content: raw(`news@${b.domain.name}`), source: 'smtp' });
  t.equal(sendA.messageId, sendB.messageId);
  // JMRP redacts the recipient: nothing tells the two sends apart.
  const jmrp = await f.receive(f.fbl, f.sample('arf-microsoft-jmrp.eml', sendA));
  t.equal(await f.run(jmrp), 'ambiguous');
  t.match(await f.recipientRow(jmrp), { tenant_id: null, outcome: 'ambiguous' });
  await nothing(t, sendA);
  await nothing(t, sendB);
  // Yahoo names it (Original-Rcpt-To, To); its envelope sender is not ours here, so only the Message-ID maps.
  const yahoo = await f.receive(f.fbl, f.sample('arf-yahoo.eml', sendB, { VERP: 'bounces@elsewhere.example' }));
  t.equal(await f.run(yahoo), 'complaint');
  t.match((await f.state(sendB)).events, [{ type: 'complaint', detail: { mapped_by: 'message_id' } }]);
  await nothing(t, sendA);
});

t.test('what cannot be mapped or read is recorded as handled, once', async (t) => {
  const send = await f.delivered(await f.sender());
  const unmapped = await f.receive(f.fbl, f.sample('arf-microsoft-jmrp.eml', send, { MESSAGE_ID: `${randomUUID()}@nowhere.example` }));
  t.equal(await f.run(unmapped), 'unmapped');
  t.equal(await f.run(unmapped), 'duplicate');
  const unknown = await f.receive(f.fbl, f.sample('auto-reply.eml', send), send.to);
  t.equal(await f.run(unknown), 'unknown');
  t.match(await f.recipientRow(unknown), { tenant_id: null, outcome: 'unknown', send_id: null });
  // A signed address of a send that no longer exists: the Message-ID inside must not stand in for it.
  const gone = bounceAddress(f.deps.verpKey, randomUUID(), f.config.hostname);
  const orphan = await f.receive(gone, f.sample('dsn-gmail-5.1.1.eml', send, { VERP: gone }));
  t.equal(await f.run(orphan), 'unmapped');
  const garbage = await f.receive(send.verp, randomBytes(2048));
  t.equal(await f.run(garbage), 'unknown', 'bytes that are not mail');
  t.match(await f.recipientRow(garbage), { tenant_id: send.tenantId, outcome: 'unknown' }, 'still attributed through its VERP address');
  await nothing(t, send);
});

t.test('jobs that name no bounce mail', async (t) => {
  t.equal(await f.run('not-a-uuid'), 'skipped');
  t.equal(await f.run(randomUUID()), 'missing');
  const send = await f.delivered(await f.sender());
  const rcptId = await f.receive(send.verp, f.sample('dsn-gmail-5.1.1.eml', send));
  await f.sql`update inbound_recipients set kind = 'tenant', tenant_id = ${send.tenantId} where id = ${rcptId}`;
  t.equal(await f.run(rcptId), 'not_bounce', 'a tenant recipient is not ours to read');
  await nothing(t, send);
});
