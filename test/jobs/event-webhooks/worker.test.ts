// Event webhooks end to end below the API clock: events recorded by the real writer, POSTed to a real 127.0.0.1 receiver, signatures checked by independent
// verifiers, retries, dead letters, replay, rotation.
import t from 'tap';
import { call, createKey } from '../../helpers/app.js';
import { buildWebhookApp, createEndpoint, recordEvents, registerTenant, START, verifyNode, verifyPython } from '../../helpers/event-webhooks.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';
import { deliverDueEventWebhooks } from '../../../jobs/event-webhooks/worker.js';

const HOUR = 3600_000;

t.test('each subscribed event is POSTed once as signed JSON; an independent node and python verifier accept the signature', async (t) => {
  const s = await buildWebhookApp(t);
  const receiver = await startWebhookReceiver(t);
  const tenant = await registerTenant(s.app);
  const { id, secret } = await createEndpoint(s.app, tenant, { url: receiver.url, event_types: ['sent', 'bounced', 'opened'] });
  t.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ and 32 bytes of standard base64');

  const events = await recordEvents(s.sql, tenant.tenantId, ['send', 'delivered', 'bounce', 'open', 'dropped']);
  const pass = await deliverDueEventWebhooks(s.ctx);
  t.same(pass.outcomes, ['delivered', 'delivered', 'delivered'], 'sent, bounced and opened; delivered and dropped are not subscribed');
  t.equal(receiver.requests.length, 3);

  const log = await call(s.app, 'GET', `/webhooks/${id}/deliveries`, { token: tenant.token });
  t.equal(log.body.total, 3);
  const byId = new Map(log.body.data.map((d: { id: string }) => [d.id, d]));
  for (const req of receiver.requests) {
    t.equal(req.method, 'POST');
    t.equal(req.headers['content-type'], 'application/json');
    t.equal(req.headers['webhook-timestamp'], String(START.getTime() / 1000), 'the timestamp is the send time in Unix seconds');
    t.match(req.headers['webhook-signature'], /^v1,[A-Za-z0-9+/]{43}=$/, 'one signature before any rotation');
    t.equal(verifyNode(secret, req), 1, 'node:crypto verifier accepts it');
    t.equal(verifyPython(secret, req), 1, 'python hmac verifier accepts it');
    const tampered = { ...req, body: Buffer.from(req.body.toString().replace('rcpt', 'RCPT')) };
    t.equal(verifyNode(secret, tampered), 0, 'a changed body does not verify');
    t.equal(verifyNode(`whsec_${Buffer.alloc(32).toString('base64')}`, req), 0, 'another secret does not verify');
    const body = JSON.parse(req.body.toString());
    const delivery = byId.get(req.headers['webhook-id'] as string) as Record<string, unknown>;
    t.ok(delivery, 'webhook-id is the delivery id of the log');
    t.match(delivery, { status: 'delivered', attempts: 1, response_code: 200, duration_ms: Number, event_type: body.type });
    t.equal(body.timestamp, START.toISOString());
    t.match(body.data, { event_id: delivery['event_id'], recipient: /^rcpt\d@example\.test$/ });
  }
  const types = receiver.requests.map((r) => JSON.parse(r.body.toString()).type).sort();
  t.same(types, ['bounced', 'opened', 'sent']);
  const bounced = receiver.requests.map((r) => JSON.parse(r.body.toString())).find((b) => b.type === 'bounced');
  t.match(bounced.data, { subtype: 'hard', message_id: events[2]!.message_id, detail: { n: 2 } });

  t.same((await deliverDueEventWebhooks(s.ctx)).outcomes, [], 'nothing is sent twice');
  t.equal(receiver.requests.length, 3);
});

t.test('the outbox row commits with the event: a rolled-back recording queues nothing; other tenants and disabled endpoints get nothing', async (t) => {
  const s = await buildWebhookApp(t);
  const receiver = await startWebhookReceiver(t);
  const owner = await registerTenant(s.app);
  const other = await registerTenant(s.app);
  const mine = await createEndpoint(s.app, owner, { url: receiver.url, event_types: ['delivered'] });
  await createEndpoint(s.app, owner, { url: receiver.url, event_types: ['delivered'], enabled: false });
  await createEndpoint(s.app, other, { url: receiver.url, event_types: ['delivered'] });

  const { insertEvents } = await import('../../../shared/engagement/events/queries.js');
  await s.sql
    .begin(async (tx) => {
      await insertEvents(tx, [
        {
          tenant_id: owner.tenantId,
          type: 'delivered',
          subtype: null,
          send_id: null,
          message_id: 'x',
          recipient: 'a@example.test',
          detail: {},
          occurred_at: START,
        },
      ]);
      throw new Error('roll back');
    })
    .catch(() => undefined);
  t.equal((await s.sql`select count(*)::int as n from event_webhook_deliveries`)[0]!['n'], 0, 'no delivery without its event');

  await recordEvents(s.sql, owner.tenantId, ['delivered']);
  const rows = await s.sql<{ webhook_id: string }[]>`select webhook_id from event_webhook_deliveries`;
  t.same(
    rows.map((r) => r.webhook_id),
    [mine.id],
    "only the enabled endpoint of the event's tenant",
  );
  await deliverDueEventWebhooks(s.ctx);
  t.equal(receiver.requests.length, 1);
});

t.test('5xx and timeouts are retried on the backoff, then dead-lettered; replay delivers with the same webhook-id', async (t) => {
  const s = await buildWebhookApp(t);
  const receiver = await startWebhookReceiver(t);
  const tenant = await registerTenant(s.app);
  const { id } = await createEndpoint(s.app, tenant, { url: receiver.url, event_types: ['clicked'] });
  // Sessions expire on the test clock's days of backoff; an unrestricted key does not.
  const { key } = await createKey(s.app, tenant);
  receiver.answer({ status: 503, body: 'down for maintenance' });
  await recordEvents(s.sql, tenant.tenantId, ['click']);

  const delays = s.config.webhooks.retry_delays_seconds;
  const seen: string[] = [];
  for (let attempt = 1; attempt <= delays.length + 1; attempt++) {
    const pass = await deliverDueEventWebhooks(s.ctx);
    seen.push(...pass.outcomes);
    if (attempt <= delays.length) {
      t.same(await deliverDueEventWebhooks(s.ctx), { claimed: 0, outcomes: [] }, `attempt ${attempt + 1} is not due before its backoff`);
      s.clock.advance(delays[attempt - 1]! * 1000);
    }
  }
  t.same(seen, [...delays.map(() => 'retry'), 'dead'], `${delays.length + 1} attempts, then dead`);
  t.equal(receiver.requests.length, delays.length + 1);
  t.equal(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size, 1, 'every attempt carries the same webhook-id');

  const dead = await call(s.app, 'GET', '/webhooks/dead-letters', { token: key });
  t.equal(dead.body.total, 1);
  t.match(dead.body.data[0], {
    webhook_id: id,
    status: 'dead',
    attempts: delays.length + 1,
    response_code: 503,
    last_error: `HTTP 503: down for maintenance (gave up after ${delays.length + 1} attempts)`,
    dead_at: String,
    next_attempt_at: null,
  });
  const deliveryId = dead.body.data[0].id;

  receiver.answer({ status: 204 });
  const replay = await call(s.app, 'POST', `/webhooks/dead-letters/${deliveryId}/replay`, { token: key });
  t.equal(replay.status, 200);
  t.match(replay.body.data, { id: deliveryId, status: 'pending', attempts: 0 });
  t.same((await deliverDueEventWebhooks(s.ctx)).outcomes, ['delivered']);
  t.equal(receiver.requests.at(-1)!.headers['webhook-id'], deliveryId, 'the replay is the same message to the receiver');
  const again = await call(s.app, 'POST', `/webhooks/dead-letters/${deliveryId}/replay`, { token: key });
  t.equal(again.status, 404, 'a delivered row is no dead letter');
  t.equal((await call(s.app, 'GET', '/webhooks/dead-letters', { token: key })).body.total, 0);
  const [audit] = await s.sql`select actor_type, resource_id from audit_events where action = 'event_webhook.delivery_replayed'`;
  t.match(audit, { actor_type: 'api_key', resource_id: deliveryId });
});

t.test('a 4xx other than 429 is dead at once; 429 waits its Retry-After; a disabled endpoint dead-letters what is queued', async (t) => {
  const s = await buildWebhookApp(t);
  const receiver = await startWebhookReceiver(t);
  const tenant = await registerTenant(s.app);
  const { id } = await createEndpoint(s.app, tenant, { url: receiver.url, event_types: ['complained', 'unsubscribed'] });

  receiver.answerNext({ status: 410, body: 'gone' });
  await recordEvents(s.sql, tenant.tenantId, ['complaint']);
  t.same((await deliverDueEventWebhooks(s.ctx)).outcomes, ['dead']);

  receiver.answerNext({ status: 429, headers: { 'retry-after': '120' } });
  await recordEvents(s.sql, tenant.tenantId, ['unsubscribe']);
  t.same((await deliverDueEventWebhooks(s.ctx)).outcomes, ['retry']);
  s.clock.advance(119_000);
  t.same((await deliverDueEventWebhooks(s.ctx)).outcomes, [], 'not before Retry-After');
  s.clock.advance(1_000);
  t.same((await deliverDueEventWebhooks(s.ctx)).outcomes, ['delivered']);

  await recordEvents(s.sql, tenant.tenantId, ['complaint'], s.clock.now());
  await call(s.app, 'PATCH', `/webhooks/${id}`, { token: tenant.token, body: { enabled: false } });
  t.same((await deliverDueEventWebhooks(s.ctx)).outcomes, ['dead'], 'queued before the switch-off: dead-lettered, replayable');
  const log = await call(s.app, 'GET', `/webhooks/${id}/deliveries?status=dead`, { token: tenant.token });
  t.same(
    log.body.data.map((d: { last_error: string }) => d.last_error),
    ['webhook disabled', 'HTTP 410: gone (a 4xx answer is not retried)'],
  );
  t.equal(receiver.requests.length, 3, 'the disabled endpoint got no request');
});

t.test('rotation: for 24 hours every POST carries two signatures, one per secret; then only the new one', async (t) => {
  const s = await buildWebhookApp(t);
  const receiver = await startWebhookReceiver(t);
  const tenant = await registerTenant(s.app);
  const { id, secret: oldSecret } = await createEndpoint(s.app, tenant, { url: receiver.url, event_types: ['delivered'] });
  const { key } = await createKey(s.app, tenant);
  const rotated = await call(s.app, 'POST', `/webhooks/${id}/rotate-secret`, { token: tenant.token });
  t.equal(rotated.status, 200);
  const newSecret: string = rotated.body.data.secret;
  t.not(newSecret, oldSecret);
  t.match(rotated.body.data, { secret_revealed_once: true, previous_secret_expires_at: new Date(START.getTime() + 24 * HOUR).toISOString() });
  t.equal((await call(s.app, 'GET', `/webhooks/${id}`, { token: tenant.token })).body.data.secret, null, 'never shown again');

  await recordEvents(s.sql, tenant.tenantId, ['delivered']);
  await deliverDueEventWebhooks(s.ctx);
  const during = receiver.requests[0]!;
  t.match(during.headers['webhook-signature'], /^v1,\S+ v1,\S+$/, 'two space-separated signatures');
  t.equal(verifyNode(newSecret, during), 1, 'the new secret verifies one');
  t.equal(verifyNode(oldSecret, during), 1, 'the old secret verifies the other');
  t.equal(verifyPython(newSecret, during), 1);
  t.equal(verifyPython(oldSecret, during), 1);
  const { Webhook } = await import('standardwebhooks');
  const headers = Object.fromEntries(['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, String(during.headers[h])]));
  t.ok(
    (() => {
      try {
        // The package checks the timestamp against the real clock: sign-time is the test clock's, so only its signature check is of interest here.
        new Webhook(oldSecret).verify(during.body.toString(), headers);
        return true;
      } catch (err) {
        return /timestamp/i.test((err as Error).message);
      }
    })(),
    'the standardwebhooks package finds a signature for the old secret too',
  );

  s.clock.advance(24 * HOUR + 1000);
  await recordEvents(s.sql, tenant.tenantId, ['delivered'], s.clock.now());
  await deliverDueEventWebhooks(s.ctx);
  const after = receiver.requests[1]!;
  t.match(after.headers['webhook-signature'], /^v1,\S+$/, 'one signature once the 24 hours are over');
  t.equal(verifyNode(newSecret, after), 1);
  t.equal(verifyNode(oldSecret, after), 0, 'the old secret no longer signs');
  t.equal((await call(s.app, 'GET', `/webhooks/${id}`, { token: key })).body.data.previous_secret_expires_at, null);
});
