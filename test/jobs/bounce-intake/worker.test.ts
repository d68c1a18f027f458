// The bounce intake worker: jobs the MX enqueues on the inbound bounce queue are worked to their end, malformed ones included, and the worker stops gracefully.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { startBounceIntake } from '../../../jobs/bounce-intake/worker.js';
import { enqueueInboundJobs, INBOUND_BOUNCE_JOBS } from '../../../shared/inbound/jobs.js';
import { pollUntil } from '../../helpers/smtp-sink.js';
import { intakeFixture } from './intake-fixture.js';

const f = await intakeFixture(t);
const enqueue = (recipientIds: string[]) =>
  f.sql.begin((tx) => enqueueInboundJobs(f.boss, tx, { bounce: recipientIds.map((recipient_id) => ({ recipient_id })) }));
const jobStates = (recipientIds: string[]) =>
  f.sql<{ state: string }[]>`select state from pgboss.job where name = ${INBOUND_BOUNCE_JOBS} and data->>'recipient_id' = any(${recipientIds}::text[])`;

t.test('enqueued bounce jobs are processed', async (t) => {
  const worker = await startBounceIntake({ ...f.deps });
  t.teardown(() => worker.stop());
  const from = await f.sender();
  const bounced = await f.delivered(from);
  const complained = await f.delivered(from);
  const ids = [
    await f.receive(bounced.verp, f.sample('dsn-outlook-5.1.10.eml', bounced)),
    await f.receive(f.fbl, f.sample('arf-yahoo.eml', complained)),
    // A job naming no row (the message was deleted meanwhile) completes too: retrying would not help.
    randomUUID(),
  ];
  await enqueue(ids);
  await pollUntil('the bounce to be recorded', async () => ((await f.state(bounced)).status === 'bounced' ? true : undefined));
  await pollUntil('the complaint to be recorded', async () => ((await f.state(complained)).events.length > 0 ? true : undefined));
  t.match((await f.state(bounced)).events, [{ type: 'bounce', subtype: 'hard' }]);
  t.match((await f.state(complained)).suppressions, [{ reason: 'complaint' }]);
  const states = await pollUntil('every job to complete', async () => {
    const rows = await jobStates(ids);
    return rows.length === 3 && rows.every((r) => r.state === 'completed') ? rows : undefined;
  });
  t.equal(states.length, 3);
});

t.test('the same recipient enqueued twice is applied once', async (t) => {
  const worker = await startBounceIntake({ ...f.deps });
  t.teardown(() => worker.stop());
  const send = await f.delivered(await f.sender());
  const id = await f.receive(send.verp, f.sample('dsn-gmail-5.1.1.eml', send));
  await enqueue([id, id]);
  await pollUntil('both jobs to complete', async () => {
    const rows = await jobStates([id]);
    return rows.length === 2 && rows.every((r) => r.state === 'completed') ? true : undefined;
  });
  const after = await f.state(send);
  t.equal(after.events.length, 1);
  t.equal(after.suppressions.length, 1);
});

t.test('stop is idempotent; what is enqueued after it is taken up by the next worker', async (t) => {
  const worker = await startBounceIntake({ ...f.deps });
  await Promise.all([worker.stop(), worker.stop()]);
  const send = await f.delivered(await f.sender());
  const id = await f.receive(send.verp, f.sample('dsn-postfix-5.1.1.eml', send));
  await enqueue([id]);
  const next = await startBounceIntake({ ...f.deps });
  t.teardown(() => next.stop());
  await pollUntil('the next worker to take it', async () => ((await f.state(send)).status === 'bounced' ? true : undefined));
  t.pass('processed by the next worker');
});
