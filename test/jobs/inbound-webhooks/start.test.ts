// The webhook workers as the outbound role runs them: a queued job is taken from pg-boss and delivered; a failure queues the next attempt; stop is graceful.
import { createHmac } from 'node:crypto';
import t from 'tap';
import { startWebhookDelivery } from '../../../jobs/inbound-webhooks/start.js';
import { enqueueInboundJobs, ensureInboundJobs } from '../../../shared/inbound/jobs.js';
import { buildTestApp } from '../../helpers/app.js';
import { pollUntil } from '../../helpers/smtp-sink.js';
import { insertTenant } from '../../helpers/tenant-rows.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';
import { configureWebhook, deliveryState, insertInboundDelivery, webhookJobs } from './fixture.js';

t.test('a job the MX queued is delivered by the running workers; a 500 queues the retry 30 s on', async (t) => {
  const app = await buildTestApp(t, {
    env: {
      MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true',
      MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true',
      MAILPATH_CONFIG__WEBHOOKS__WORKERS__POLL_INTERVAL_MS: '500',
    },
  });
  const deps = app.ctx;
  const receiver = await startWebhookReceiver(t);
  const tenantId = await insertTenant(app.sql);
  const secret = await configureWebhook(app.sql, deps.vault, tenantId, { url: receiver.url });
  const running = await startWebhookDelivery(deps);
  let stopped = false;
  t.teardown(() => (stopped ? undefined : running.stop()));

  // As the MX does: the row and its job in one transaction (the queue exists once the worker started).
  await ensureInboundJobs(app.sql, { expireInSeconds: 300 });
  const d = await insertInboundDelivery(app.sql, tenantId);
  await app.sql.begin((tx) => enqueueInboundJobs(deps.boss, tx, { webhook: [{ delivery_id: d.deliveryId }], bounce: [] }));
  const delivered = await pollUntil('the delivery to be delivered', async () =>
    (await deliveryState(app.sql, d.deliveryId)).status === 'delivered' ? true : undefined,
  );
  t.ok(delivered);
  t.equal(receiver.requests.length, 1);
  const req = receiver.requests[0]!;
  t.equal(req.headers['x-mp-inbound-sig'], `hmac-sha256=${createHmac('sha256', secret).update(req.body).digest('hex')}`);

  receiver.answer({ status: 500 });
  const failing = await insertInboundDelivery(app.sql, tenantId);
  await app.sql.begin((tx) => enqueueInboundJobs(deps.boss, tx, { webhook: [{ delivery_id: failing.deliveryId }], bounce: [] }));
  const state = await pollUntil('the first attempt to fail', async () => {
    const s = await deliveryState(app.sql, failing.deliveryId);
    return s.attempts === 1 && s.last_status === 500 ? s : undefined;
  });
  t.equal(state.status, 'pending');
  const jobs = await webhookJobs(app.sql, failing.deliveryId);
  t.equal(jobs.length, 2, 'the first job and the retry');
  t.same(
    jobs.filter((j) => j.state === 'created').map((j) => j.start_after),
    [state.next_attempt_at],
    'the retry waits for next_attempt_at',
  );
  t.ok(state.next_attempt_at!.getTime() - state.last_attempt_at!.getTime() >= 30_000, 'the first wait is 30 s, counted from the failure');

  stopped = true;
  await running.stop();
  await running.stop();
  t.pass('stop is idempotent');
});
