// The outbox loop as the outbound role runs it (here over the inbound outbox): a row the MX wrote is claimed and delivered; a failure is due again 30 s
// on; stop is graceful.
import { createHmac } from 'node:crypto';
import t from 'tap';
import { startInboundWebhookDelivery } from '../../jobs/inbound-webhooks/worker.js';
import { buildTestApp } from '../helpers/app.js';
import { pollUntil } from '../helpers/smtp-sink.js';
import { insertTenant } from '../helpers/tenant-rows.js';
import { startWebhookReceiver } from '../helpers/webhook-receiver.js';
import { configureWebhook, deliveryState, insertInboundDelivery } from './inbound-webhooks/fixture.js';

t.test('a row the MX wrote is delivered by the running loop; after a 500 it is due again 30 s on', async (t) => {
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
  const running = startInboundWebhookDelivery(deps);
  let stopped = false;
  t.teardown(() => (stopped ? undefined : running.stop()));

  // As the MX writes it: a pending row due at once; the loop's next pass claims it.
  const d = await insertInboundDelivery(app.sql, tenantId);
  const delivered = await pollUntil('the delivery to be delivered', async () =>
    (await deliveryState(app.sql, d.deliveryId)).status === 'delivered' ? true : undefined,
  );
  t.ok(delivered);
  t.equal(receiver.requests.length, 1);
  const req = receiver.requests[0]!;
  t.equal(req.headers['x-mp-inbound-sig'], `hmac-sha256=${createHmac('sha256', secret).update(req.body).digest('hex')}`);

  receiver.answer({ status: 500 });
  const failing = await insertInboundDelivery(app.sql, tenantId);
  const state = await pollUntil('the first attempt to fail', async () => {
    const s = await deliveryState(app.sql, failing.deliveryId);
    return s.attempts === 1 && s.last_status === 500 ? s : undefined;
  });
  t.equal(state.status, 'pending');
  t.ok(state.next_attempt_at!.getTime() - state.last_attempt_at!.getTime() >= 30_000, 'the first wait is 30 s, counted from the failure');

  stopped = true;
  await running.stop();
  await running.stop();
  t.pass('stop is idempotent');
});
