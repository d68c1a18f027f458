// Delivery through a relay to a real SMTP sink: signed bytes and VERP sender intact, STARTTLS, connection reuse, stalls and dropped connections, graceful
// stop, test mode.
import t from 'tap';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { startOutbound } from '../../../../mta/outbound/deliver/start.js';
import { dkimTxtValue } from '../../../../shared/deliverability/domains/records.js';
import { listAttempts } from '../../../../shared/sending/outbound-log/queries.js';
import { deliveryFixture, quietSink } from '../../../helpers/delivery-fixture.js';
import { pollUntil, startSmtpSink } from '../../../helpers/smtp-sink.js';

const sink = await startSmtpSink(t, { tls: true });
const { sql, deps, sender, recipient, send, sendRow, settled, queued, events, outbound } = await deliveryFixture(t, {
  env: {
    MAILPATH_OUTBOUND_RELAY: sink.address,
    MAILPATH_CONFIG__DELIVERY__DESTINATION__MAX_CONNECTIONS: '2',
    MAILPATH_CONFIG__DELIVERY__TIMEOUTS__SOCKET_MS: '1000',
    MAILPATH_CONFIG__DELIVERY__TIMEOUTS__GREETING_MS: '1000',
  },
});

t.beforeEach(() => quietSink(sink));

t.test('a message arrives byte for byte, DKIM-valid, from the VERP address, over STARTTLS', async (t) => {
  const from = await sender();
  await outbound(t);
  const { id, to } = await send(from);
  const row = await settled(id, ['delivered']);
  const [got] = await sink.waitForMessages(1);
  t.equal(got!.from, row.envelope_from);
  t.match(got!.from, /^b-[0-9a-f]{32}-[0-9a-f]{10}@mx\.mailpath\.local$/);
  t.same(got!.to, [to]);
  t.ok(got!.raw.equals(row.message!), 'the stored signed bytes, unchanged');
  t.ok(got!.secure, 'STARTTLS was used (the sink offers it with a self-signed certificate)');
  const verified = await dkimVerify(got!.raw, {
    resolver: async (name: string) => (name === `${from.domain.selector}._domainkey.${from.domain.name}` ? [[dkimTxtValue(from.domain.key.publicKey)]] : []),
  });
  t.equal(verified.results[0]?.status.result, 'pass', 'the DKIM signature verifies at the receiver');
  const [attempt] = await listAttempts(sql, id);
  t.match(attempt, { outcome: 'delivered', remote_host: '127.0.0.1', smtp_code: 250 });
  t.same(
    (await events(id)).map((e) => e.type),
    ['send', 'delivered'],
  );
  t.equal(await queued(id), undefined, 'out of the delivery queue with its outcome');
});

t.test('many messages to one destination share a few connections, never more than max_connections', async (t) => {
  const from = await sender();
  const sends = [];
  for (let i = 0; i < 12; i++) sends.push(await send(from));
  await outbound(t);
  for (const s of sends) await settled(s.id, ['delivered']);
  const stats = sink.stats();
  t.ok(stats.maxOpen <= 2, `at most 2 connections at once (saw ${stats.maxOpen})`);
  t.ok(stats.opened <= 4, `12 messages over ${stats.opened} connections`);
  t.equal(new Set(sink.messages.map((m) => m.connection)).size, stats.opened);
});

t.test('a server that stalls is a temporary failure within the socket timeout', async (t) => {
  const from = await sender();
  await outbound(t);
  const to = recipient();
  sink.answerFor(to, { stall: true });
  const { id } = await send(from, { to });
  await settled(id, ['deferred']);
  const [attempt] = await listAttempts(sql, id);
  t.match(attempt, { outcome: 'deferred', smtp_code: null });
  // nodemailer names the timeout that fired: the socket timeout's is 'Timeout' ('Greeting never received' and 'Connection timeout' are the others').
  t.equal(attempt!.reply, 'ETIMEDOUT: Timeout', 'the socket timeout ended the attempt, not the greeting or connection timeout');
});

t.test('a server that drops the connection before greeting is a temporary failure', async (t) => {
  const from = await sender();
  await outbound(t);
  sink.dropConnections(5);
  const { id } = await send(from);
  await settled(id, ['deferred']);
  t.match((await listAttempts(sql, id))[0], { outcome: 'deferred', smtp_code: null, reply: /ECONNECTION/ });
  t.ok(sink.stats().opened <= 2, 'one fresh connection is tried again, no more');
});

t.test('stop waits for the delivery in flight and stores its outcome', async (t) => {
  const from = await sender();
  const running = await startOutbound(deps);
  const to = recipient();
  sink.answerFor(to, { stall: true });
  const { id } = await send(from, { to });
  await pollUntil('the delivery to reach RCPT', async () => (sink.rcpts.some((r) => r.to === to) ? true : undefined));
  t.equal((await sendRow(id)).status, 'queued');
  t.ok((await queued(id))?.claimed_at, 'held by the worker (handed over at acceptance)');
  await running.stop();
  t.equal((await sendRow(id)).status, 'deferred', 'stored before stop returned');
  t.equal((await listAttempts(sql, id)).length, 1);
});

t.test('a test-mode send never reaches the sink, even with a row in the delivery queue', async (t) => {
  const from = await sender();
  await outbound(t);
  const simulated = await send(from, { mode: 'test' });
  t.equal((await sendRow(simulated.id)).status, 'simulated');
  // A queue row that should not exist (a bug elsewhere): the worker still refuses to deliver, and drops the row.
  await sql`update sends set status = 'queued' where id = ${simulated.id}`;
  await sql`insert into delivery_queue (send_id, due_at) values (${simulated.id}, ${new Date()})`;
  await pollUntil('the stray row to go', async () => ((await queued(simulated.id)) === undefined ? true : undefined));
  t.equal((await sendRow(simulated.id)).status, 'queued', 'untouched');
  t.same(sink.rcpts, []);
  t.equal(sink.stats().opened, 0);
});
