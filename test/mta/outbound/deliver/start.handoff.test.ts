// Sends accepted where the outbound role runs go straight to its workers, as far as they have room (the rest wait in the
// queue, due, for any worker); a stop gives back the sends its workers had not started, due at once.
import t from 'tap';
import { startOutbound } from '../../../../mta/outbound/deliver/start.js';
import { deliveryFixture, quietSink } from '../../../helpers/delivery-fixture.js';
import { pollUntil, startSmtpSink } from '../../../helpers/smtp-sink.js';

const sink = await startSmtpSink(t);
// Two deliveries at once and two more held: room for four.
const { sql, deps, sender, recipient, send, settled, queued } = await deliveryFixture(t, {
  env: {
    MAILPATH_OUTBOUND_RELAY: sink.address,
    MAILPATH_CONFIG__DELIVERY__WORKERS__CONCURRENCY: '2',
    MAILPATH_CONFIG__DELIVERY__WORKERS__BATCH_SIZE: '2',
    MAILPATH_CONFIG__DELIVERY__TIMEOUTS__SOCKET_MS: '1500',
  },
});

t.beforeEach(() => quietSink(sink));

t.test('accepted sends are handed to the workers while they have room; a stop gives back those not started', async (t) => {
  const from = await sender();
  const running = await startOutbound(deps);
  const stalled = [recipient(), recipient(), recipient(), recipient(), recipient(), recipient()];
  for (const to of stalled) sink.answerFor(to, { stall: true });
  const sends = [];
  for (const to of stalled) sends.push(await send(from, { to }));
  const rows = await Promise.all(sends.map((s) => queued(s.id)));
  t.equal(rows.filter((r) => r?.claimed_at).length, 4, 'four handed over, claimed in the transaction that stored them');
  t.equal(rows.filter((r) => r && !r.claimed_at).length, 2, 'two left due in the queue (no room)');
  await pollUntil('two deliveries in flight', async () => (sink.rcpts.length >= 2 ? true : undefined));
  const before = new Date();
  await running.stop();
  const after = await Promise.all(sends.map((s) => queued(s.id)));
  const givenBack = after.filter((r, i) => rows[i]?.claimed_at && r && !r.claimed_at && r.due_at <= new Date());
  t.equal(givenBack.length, 2, 'the two held but not started are due again, held by nobody');
  t.ok(
    givenBack.every((r) => r!.due_at >= new Date(before.getTime() - 1000)),
    'due now',
  );
  t.equal(sink.rcpts.length, 2, 'only the two in flight reached the server');
});

t.test('a worker started later claims what waits in the queue', async (t) => {
  const from = await sender();
  const waiting = await send(from);
  t.equal((await queued(waiting.id))?.claimed_at, null, 'no worker ran: stored due');
  const running = await startOutbound(deps);
  t.teardown(() => running.stop());
  await settled(waiting.id, ['delivered']);
  t.equal(await queued(waiting.id), undefined);
  t.equal((await sql`select count(*)::int as n from send_attempts where send_id = ${waiting.id}`)[0]!['n'], 1);
});
