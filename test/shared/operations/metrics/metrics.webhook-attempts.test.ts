// Webhook attempts reach the process's metrics: event webhooks (kind=event) and inbound-mail webhooks (kind=inbound), by outcome.
import t from 'tap';
import { deliverDueInboundWebhooks } from '../../../../jobs/inbound-webhooks/worker.js';
import { deliverDueEventWebhooks } from '../../../../jobs/event-webhooks/worker.js';
import { buildWebhookApp, createEndpoint, recordEvents, registerTenant } from '../../../helpers/event-webhooks.js';
import { insertTenant } from '../../../helpers/tenant-rows.js';
import { startWebhookReceiver } from '../../../helpers/webhook-receiver.js';
import { configureWebhook, insertInboundDelivery } from '../../../jobs/inbound-webhooks/fixture.js';

const s = await buildWebhookApp(t);
const receiver = await startWebhookReceiver(t);

async function attempts(kind: string, outcome: string): Promise<number> {
  const metric = await s.ctx.metrics.registry.getSingleMetric('mailpath_webhook_attempts_total')!.get();
  return metric.values.find((v) => v.labels['kind'] === kind && v.labels['outcome'] === outcome)?.value ?? 0;
}

t.test('event webhooks: a 2xx counts as success, anything else as failure', async (t) => {
  const tenant = await registerTenant(s.app);
  await createEndpoint(s.app, tenant, { url: receiver.url, event_types: ['sent'] });
  receiver.answerNext({ status: 200 }, { status: 500 });
  await recordEvents(s.sql, tenant.tenantId, ['send', 'send']);
  const pass = await deliverDueEventWebhooks(s.ctx);
  t.same([...pass.outcomes].sort(), ['delivered', 'retry']);
  t.equal(await attempts('event', 'success'), 1);
  t.equal(await attempts('event', 'failure'), 1);
  t.equal(await attempts('inbound', 'success'), 0, 'the other kind is its own series');
});

t.test('inbound-mail webhooks: one attempt per POST, by outcome', async (t) => {
  const tenantId = await insertTenant(s.sql);
  await configureWebhook(s.sql, s.ctx.vault, tenantId, { url: receiver.url });
  receiver.answerNext({ status: 200 }, { status: 503 });
  await insertInboundDelivery(s.sql, tenantId);
  await insertInboundDelivery(s.sql, tenantId);
  const pass = await deliverDueInboundWebhooks(s.ctx);
  t.same([...pass.outcomes].sort(), ['delivered', 'retry']);
  t.equal(await attempts('inbound', 'success'), 1);
  t.equal(await attempts('inbound', 'failure'), 1);
});
