// Restarts and several processes on one outbox: a worker stopped mid-way, one that died holding claims, two running at once; every event arrives, none twice.
import t from 'tap';
import { connect } from '../../../shared/db/connection.js';
import { claimDueDeliveries } from '../../../shared/webhooks/events/queries.js';
import { startEventWebhookDelivery, type EventWebhookDeps } from '../../../jobs/event-webhooks/worker.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { buildWebhookApp, createEndpoint, recordEvents, registerTenant } from '../../helpers/event-webhooks.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';

const EVENTS = 40;

t.test('stop mid-way, a crashed claim, two processes: each event is POSTed exactly once', async (t) => {
  const s = await buildWebhookApp(t);
  const receiver = await startWebhookReceiver(t);
  const tenant = await registerTenant(s.app);
  await createEndpoint(s.app, tenant, { url: receiver.url, event_types: ['sent'] });
  await recordEvents(s.sql, tenant.tenantId, Array<'send'>(EVENTS).fill('send'));

  /** A "process": its own connection pool, small batches, a fast poll. */
  const process = (): EventWebhookDeps => {
    const sql = connect(s.db.url, createLogger('silent'), { max: 2 });
    t.teardown(() => sql.end({ timeout: 5 }));
    const webhooks = { ...s.config.webhooks, workers: { batch_size: 3, poll_interval_ms: 20 } };
    return { ...s.ctx, sql, config: { ...s.config, webhooks } };
  };
  const waitFor = async (what: string, done: () => Promise<boolean> | boolean) => {
    for (let i = 0; i < 1000; i++) {
      if (await done()) return;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`timed out waiting for ${what}`);
  };

  // A process that claimed five deliveries and died before POSTing them: they stay pending under their lease.
  const crashed = await claimDueDeliveries(process().sql, {
    dueBy: s.clock.now(),
    leaseUntil: new Date(s.clock.now().getTime() + 15_000),
    at: s.clock.now(),
    limit: 5,
  });
  t.equal(crashed.length, 5);

  const first = startEventWebhookDelivery(process());
  await waitFor('the first POSTs', () => receiver.requests.length >= 10);
  await first.stop();
  const afterStop = receiver.requests.length;
  t.ok(afterStop < EVENTS - 5, `stopped mid-way (${afterStop} sent)`);
  const delivered = async () => (await s.sql<{ n: number }[]>`select count(*)::int as n from event_webhook_deliveries where status = 'delivered'`)[0]!.n;
  t.equal(await delivered(), afterStop, 'every POST made before the stop is recorded: the stop waited for them');

  // Two processes at once over the same outbox; then the dead process's lease runs out.
  const a = startEventWebhookDelivery(process());
  const b = startEventWebhookDelivery(process());
  await waitFor('all but the crashed claims', async () => (await delivered()) === EVENTS - 5);
  s.clock.advance(16_000);
  await waitFor('the crashed claims, once their lease is over', async () => (await delivered()) === EVENTS);
  await Promise.all([a.stop(), b.stop()]);

  const ids = receiver.requests.map((r) => String(r.headers['webhook-id']));
  t.equal(ids.length, EVENTS, 'one POST per event');
  t.equal(new Set(ids).size, EVENTS, 'no webhook-id twice');
  const eventIds = new Set(receiver.requests.map((r) => JSON.parse(r.body.toString()).data.event_id));
  t.equal(eventIds.size, EVENTS, 'every event arrived');
  for (const d of crashed) t.ok(ids.includes(d.id), "the dead process's claims were delivered by the others");
});
