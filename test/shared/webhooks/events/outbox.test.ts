// Every event writer queues its events for webhooks in its own statement sequence: single feed events, batches, tracking hits (opens, clicks, unsubscribes)
// and received mail (inbound).
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { insertEvent } from '../../../../shared/engagement/events/queries.js';
import { insertReceived } from '../../../../shared/inbound/queries.js';
import { insertEngagementEvents } from '../../../../shared/engagement/tracking/queries.js';
import { deliverDueEventWebhooks } from '../../../../jobs/event-webhooks/worker.js';
import { buildWebhookApp, createEndpoint, registerTenant, START } from '../../../helpers/event-webhooks.js';
import { startWebhookReceiver } from '../../../helpers/webhook-receiver.js';

const ALL = ['sent', 'delivered', 'deferred', 'bounced', 'complained', 'opened', 'clicked', 'unsubscribed', 'inbound'];

t.test('insertEvent, insertEngagementEvents and insertReceived each queue their events; bounce and unsubscribe mail is no inbound event', async (t) => {
  const s = await buildWebhookApp(t);
  const receiver = await startWebhookReceiver(t);
  const tenant = await registerTenant(s.app);
  await createEndpoint(s.app, tenant, { url: receiver.url, event_types: ALL });

  await s.sql.begin(async (tx) => {
    await insertEvent(tx, {
      tenant_id: tenant.tenantId,
      type: 'deferred',
      subtype: null,
      send_id: null,
      message_id: 'm1',
      recipient: 'a@example.test',
      detail: { reason: 'warmup' },
      occurred_at: START,
    });
    await insertEvent(tx, {
      tenant_id: tenant.tenantId,
      type: 'complaint',
      subtype: null,
      send_id: null,
      message_id: 'm1',
      recipient: 'a@example.test',
      detail: {},
      occurred_at: START,
    });
  });

  const engagement = (['open', 'click', 'unsubscribe'] as const).map((type) => ({
    id: randomUUID(),
    tenant_id: tenant.tenantId,
    type,
    // The tracked send is not needed here: the events table allows a null send_id.
    send_id: null as unknown as string,
    message_id: 'm2',
    recipient: 'b@example.test',
    detail: type === 'click' ? { url: 'https://example.test/x' } : {},
    occurred_at: START,
    campaign_id: null,
    contact_id: null,
  }));
  await s.sql.begin((tx) => insertEngagementEvents(tx, engagement));

  const messageId = randomUUID();
  const recipient = (kind: 'tenant' | 'bounce', address: string) => ({
    id: randomUUID(),
    message_id: messageId,
    recipient: address,
    kind,
    tenant_id: kind === 'tenant' ? tenant.tenantId : null,
    created_at: START,
  });
  const tenantRecipient = recipient('tenant', 'support@acme.example');
  await s.sql.begin((tx) =>
    insertReceived(tx, {
      messages: [
        {
          id: messageId,
          received_at: START,
          remote_address: '192.0.2.10',
          helo: 'mail.sender.example',
          tls: true,
          mail_from: 'alice@sender.example',
          size_bytes: 10,
          raw: Buffer.from('Subject: hi\r\n\r\nhi\r\n'),
          authentication_results: null,
          header_message_id: 'abc@sender.example',
          header_from: 'Alice <alice@sender.example>',
          subject: 'hi',
        },
      ],
      recipients: [tenantRecipient, recipient('bounce', 'bounces+x@mx.mailpath.test')],
      mailboxMessages: [],
      deliveries: [],
    }),
  );

  await deliverDueEventWebhooks(s.ctx);
  const bodies = receiver.requests.map((r) => JSON.parse(r.body.toString()));
  t.same(bodies.map((b) => b.type).sort(), ['clicked', 'complained', 'deferred', 'inbound', 'opened', 'unsubscribed']);
  const inbound = bodies.find((b) => b.type === 'inbound');
  t.same(inbound.data, {
    event_id: tenantRecipient.id,
    inbound_message_id: messageId,
    recipient: 'support@acme.example',
    mail_from: 'alice@sender.example',
    from: 'Alice <alice@sender.example>',
    subject: 'hi',
    message_id: 'abc@sender.example',
  });
  t.match(bodies.find((b) => b.type === 'clicked').data, { detail: { url: 'https://example.test/x' }, recipient: 'b@example.test' });
  t.match(bodies.find((b) => b.type === 'deferred').data, { detail: { reason: 'warmup' } });
});
