// Delivery outcomes reach the process's metrics: accepted at acceptance, then delivered (with its latency), deferred and bounced, per attempt.
import t from 'tap';
import { deliveryFixture, quietSink } from '../../../helpers/delivery-fixture.js';
import { startSmtpSink } from '../../../helpers/smtp-sink.js';

const sink = await startSmtpSink(t);
const { ctx, sender, send, settled, outbound, recipient } = await deliveryFixture(t, { env: { MAILPATH_OUTBOUND_RELAY: sink.address } });

t.beforeEach(() => quietSink(sink));

/** A counter's value for one label set, read from the registry as a scrape would. */
async function count(name: string, labels: Record<string, string>): Promise<number> {
  const metric = await ctx.metrics.registry.getSingleMetric(name)!.get();
  const value = metric.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return value?.value ?? 0;
}

t.test('accepted, delivered, deferred and bounced are counted; a delivery observes its latency', async (t) => {
  const from = await sender();
  const before = {
    accepted: await count('mailpath_messages_total', { outcome: 'accepted' }),
    delivered: await count('mailpath_messages_total', { outcome: 'delivered' }),
    deferred: await count('mailpath_messages_total', { outcome: 'deferred' }),
    bounced: await count('mailpath_messages_total', { outcome: 'bounced' }),
    latency: await count('mailpath_delivery_latency_seconds', { le: '+Inf' }),
  };
  const deferredTo = recipient();
  const bouncedTo = recipient();
  sink.answerFor(deferredTo, { code: 451, text: '4.7.1 try later' });
  sink.answerFor(bouncedTo, { code: 550, text: '5.1.1 no such user' });
  const delivered = await send(from);
  const deferred = await send(from, { to: deferredTo });
  const bounced = await send(from, { to: bouncedTo });
  t.equal(await count('mailpath_messages_total', { outcome: 'accepted' }), before.accepted + 3, 'three accepted');
  await outbound(t);
  await settled(delivered.id, ['delivered']);
  await settled(deferred.id, ['deferred']);
  await settled(bounced.id, ['bounced']);
  t.equal(await count('mailpath_messages_total', { outcome: 'delivered' }), before.delivered + 1);
  t.equal(await count('mailpath_messages_total', { outcome: 'deferred' }), before.deferred + 1);
  t.equal(await count('mailpath_messages_total', { outcome: 'bounced' }), before.bounced + 1);
  t.equal(await count('mailpath_delivery_latency_seconds', { le: '+Inf' }), before.latency + 1, 'one delivery latency observed');
});
