// Plugin store (the queue phase): one transaction stores the message, a row per recipient, mailbox copies, webhook deliveries and the follow-up jobs;
// concurrent messages share commits; a failure stores nothing.
import t from 'tap';
import { randomUUID } from 'node:crypto';
import { createLogger } from '../../shared/kernel/log.js';
import { INBOUND_BOUNCE_JOBS } from '../../shared/inbound/jobs.js';
import storePlugin from '../../plugins/store.js';
import type { Decision, PhaseContexts, Recipient } from '../../mta/hooks/phases.js';
import { NOTHING_STORED, message, startTestMx, storedCounts, tenantDomain } from '../mta/inbound/fixtures.js';

const { deps, sql } = await startTestMx(t);
const plugin = storePlugin(deps);
const session = {
  id: 's',
  remoteAddress: '192.0.2.7',
  remotePort: 1,
  clientHostname: '[192.0.2.7]',
  secure: true,
  helo: 'c.example',
  protocol: 'ESMTPS',
  log: createLogger('silent'),
};
const RECEIVED = 'Received: from c.example ([192.0.2.7])\r\n\tby mx.mailpath.test (Mailpath) with ESMTPS id x;\r\n\tSun, 22 Nov 2026 00:00:00 +0000\r\n';
const AR = 'Authentication-Results: mx.mailpath.test;\r\n spf=none\r\n';

function ctx(
  recipients: Recipient[],
  body = message({ From: 'Ann <ann@sender.example>', Subject: 'Stored', 'Message-ID': '<q1@sender.example>' }),
): PhaseContexts['queue'] {
  const bytes = Buffer.from(body);
  return {
    session,
    transaction: { id: randomUUID(), mailFrom: 'ann@sender.example', mailParams: {}, recipients, headers: [AR] },
    message: { bytes, size: bytes.length, sizeExceeded: false },
    received: RECEIVED,
  };
}
const store = (c: PhaseContexts['queue']) => plugin.hooks.queue!(c, new AbortController().signal) as Promise<Decision>;
const r = (address: string, route: Recipient['route']): Recipient => ({ address, sourceRoute: undefined, ...(route ? { route } : {}) });

t.test('one message to a webhook address, a mailbox with the webhook, a mailbox without it, a VERP bounce and the feedback loop', async (t) => {
  const hook = await tenantDomain(sql, { mailboxes: ['ann'] });
  const quiet = await tenantDomain(sql, { webhook: 'disabled', mailboxes: ['bob'] });
  const c = ctx([
    r(`any@${hook.name}`, { kind: 'tenant', tenantId: hook.tenantId, mailboxId: null, webhook: true }),
    r(`ann@${hook.name}`, { kind: 'tenant', tenantId: hook.tenantId, mailboxId: hook.mailboxIds['ann']!, webhook: true }),
    r(`bob@${quiet.name}`, { kind: 'tenant', tenantId: quiet.tenantId, mailboxId: quiet.mailboxIds['bob']!, webhook: false }),
    r('b-x@mx.mailpath.test', { kind: 'bounce', sendId: randomUUID() }),
    r('fbl@mx.mailpath.test', { kind: 'bounce', sendId: null }),
  ]);
  const decision = await store(c);
  t.same(decision, { kind: 'accept', text: `2.0.0 Ok: queued as ${c.transaction.id}` });

  const [m] = await sql`select * from inbound_messages where id = ${c.transaction.id}`;
  t.equal(m!['raw'].toString(), RECEIVED + AR + c.message.bytes.toString(), 'Received, then Authentication-Results, then the client bytes');
  t.match(m, {
    remote_address: '192.0.2.7',
    helo: 'c.example',
    tls: true,
    mail_from: 'ann@sender.example',
    header_message_id: 'q1@sender.example',
    header_from: 'Ann <ann@sender.example>',
    subject: 'Stored',
    authentication_results: 'mx.mailpath.test; spf=none',
  });
  t.equal(m!['size_bytes'], m!['raw'].length);

  const recipients = await sql<
    { id: string; recipient: string; kind: string; tenant_id: string | null }[]
  >`select * from inbound_recipients where message_id = ${c.transaction.id}`;
  const byAddress = new Map(recipients.map((x) => [x.recipient, x]));
  t.equal(recipients.length, 5);
  t.match(byAddress.get(`any@${hook.name}`), { kind: 'tenant', tenant_id: hook.tenantId });
  t.match(byAddress.get('fbl@mx.mailpath.test'), { kind: 'bounce', tenant_id: null });

  const copies = await sql<
    { mailbox_id: string; recipient: string; subject: string; header_from: string }[]
  >`select * from mailbox_messages where inbound_message_id = ${c.transaction.id} order by recipient`;
  t.same(
    copies.map((x) => [x.mailbox_id, x.recipient]),
    [
      [hook.mailboxIds['ann'], `ann@${hook.name}`],
      [quiet.mailboxIds['bob'], `bob@${quiet.name}`],
    ],
  );
  t.match(copies[0], { subject: 'Stored', header_from: 'Ann <ann@sender.example>' });

  const deliveries = await sql<{ id: string; inbound_recipient_id: string; status: string; next_attempt_at: Date | null }[]>`
    select d.* from inbound_webhook_deliveries d join inbound_recipients x on x.id = d.inbound_recipient_id where x.message_id = ${c.transaction.id}`;
  t.same(
    deliveries.map((d) => d.inbound_recipient_id).sort(),
    [byAddress.get(`any@${hook.name}`)!.id, byAddress.get(`ann@${hook.name}`)!.id].sort(),
    'a webhook delivery for each webhook recipient',
  );
  t.ok(
    deliveries.every((d) => d.status === 'pending' && d.next_attempt_at !== null),
    'pending and due in the outbox',
  );
  const bounceJobs = await sql<{ id: string }[]>`select data->>'recipient_id' as id from pgboss.job where name = ${INBOUND_BOUNCE_JOBS}`;
  t.same(
    bounceJobs.map((j) => j.id).sort(),
    [byAddress.get('b-x@mx.mailpath.test')!.id, byAddress.get('fbl@mx.mailpath.test')!.id].sort(),
    'one bounce job per bounce recipient',
  );
});

t.test('a recipient accepted without a route: 451, nothing stored', async (t) => {
  const before = await storedCounts(sql);
  const decision = await store(ctx([r('x@nowhere.example', undefined)]));
  t.match(decision, { kind: 'defer', code: 451, enhanced: '4.3.0' });
  t.same(await storedCounts(sql), before);
});

t.test('concurrent messages are committed together; one that cannot be stored fails alone', async (t) => {
  const fresh = await startTestMx(t);
  const p = storePlugin(fresh.deps);
  const d = await tenantDomain(fresh.sql);
  const good = Array.from({ length: 30 }, () => ctx([r(`x@${d.name}`, { kind: 'tenant', tenantId: d.tenantId, mailboxId: null, webhook: true })]));
  // A tenant that does not exist breaks a foreign key: its batch fails, and is committed again one by one.
  const bad = ctx([r(`x@${d.name}`, { kind: 'tenant', tenantId: randomUUID(), mailboxId: null, webhook: true })]);
  const all = [...good.slice(0, 15), bad, ...good.slice(15)];
  const decisions = await Promise.all(all.map((c) => p.hooks.queue!(c, new AbortController().signal)));
  t.match(decisions[15], { kind: 'defer', code: 451 });
  t.ok(
    decisions.filter((_, i) => i !== 15).every((x) => x.kind === 'accept'),
    'the others are stored',
  );
  t.same(await storedCounts(fresh.sql), { ...NOTHING_STORED, inbound_messages: 30, inbound_recipients: 30, inbound_webhook_deliveries: 30 });
});
