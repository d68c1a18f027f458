// Inbound-webhook delivery passes against real receivers: delivered once, 4xx dead at once, 429 per Retry-After, the 7-attempt schedule on an injected
// clock, and the edge cases.
import { createHmac } from 'node:crypto';
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { deliverDueInboundWebhooks, type WebhookDeps } from '../../../jobs/inbound-webhooks/worker.js';
import { updateWebhookSettingsFor } from '../../../shared/webhooks/inbound/service.js';
import { buildTestApp, type TestLike } from '../../helpers/app.js';
import { insertTenant } from '../../helpers/tenant-rows.js';
import { startWebhookReceiver, type ReceivedRequest } from '../../helpers/webhook-receiver.js';
import { configureWebhook, deliveryState, insertInboundDelivery } from './fixture.js';

const START = new Date('2026-03-01T10:00:00.000Z');
const LOCAL_ENV = {
  MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true',
  MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true',
  MAILPATH_CONFIG__WEBHOOKS__TIMEOUT_SECONDS: '0.5',
};

async function setup(t: TestLike) {
  const clock = new ManualClock(START);
  const app = await buildTestApp(t, { clock, env: LOCAL_ENV });
  const deps: WebhookDeps = app.ctx;
  const receiver = await startWebhookReceiver(t);
  const tenantId = await insertTenant(app.sql);
  const secret = await configureWebhook(app.sql, deps.vault, tenantId, { url: receiver.url });
  // One pass over the outbox: the one delivery due's outcome, 'none' when nothing was due.
  const run = async () => {
    const { outcomes } = await deliverDueInboundWebhooks(deps);
    return outcomes.length === 0 ? 'none' : outcomes.join(',');
  };
  return { ...app, clock, deps, receiver, tenantId, secret, run };
}

const signatureOk = (req: ReceivedRequest, secret: string) =>
  req.headers['x-mp-inbound-sig'] === `hmac-sha256=${createHmac('sha256', secret).update(req.body).digest('hex')}`;

t.test('a 2xx delivers: one signed POST of the stored bytes, the row says delivered, and another pass sends nothing', async (t) => {
  const s = await setup(t);
  const d = await insertInboundDelivery(s.sql, s.tenantId);
  t.equal(await s.run(), 'delivered');
  t.match(await deliveryState(s.sql, d.deliveryId), {
    status: 'delivered',
    attempts: 1,
    last_status: 200,
    last_error: null,
    next_attempt_at: null,
    last_attempt_at: START,
    delivered_at: START,
    dead_at: null,
  });
  const req = s.receiver.requests[0]!;
  t.ok(req.body.equals(d.raw), 'the stored raw bytes');
  t.ok(signatureOk(req, s.secret), 'HMAC over the received bytes matches the tenant secret');
  t.match(req.headers, {
    'x-mp-inbound-tenant': s.tenantId,
    'x-mp-inbound-recipient': d.recipient,
    'x-mp-inbound-delivery': d.deliveryId,
    'x-mp-inbound-attempt': '1',
  });

  t.equal(await s.run(), 'none', 'a second pass finds nothing due');
  t.equal(s.receiver.requests.length, 1, 'no second POST');
});

t.test('two passes at once make one POST: the claim skips a row another pass holds', async (t) => {
  const s = await setup(t);
  const d = await insertInboundDelivery(s.sql, s.tenantId);
  t.same((await Promise.all([s.run(), s.run()])).sort(), ['delivered', 'none']);
  t.equal(s.receiver.requests.length, 1);
  t.match(await deliveryState(s.sql, d.deliveryId), { status: 'delivered', attempts: 1 });
});

t.test('an attempt whose worker died is taken again once its lease (timeout + 5 s) runs out, with the next attempt number', async (t) => {
  const s = await setup(t);
  const d = await insertInboundDelivery(s.sql, s.tenantId);
  // A claim whose POST never reported back: the row is held, not lost.
  await s.sql`update inbound_webhook_deliveries set attempts = 1, next_attempt_at = ${new Date(START.getTime() + 5500)} where id = ${d.deliveryId}`;
  t.equal(await s.run(), 'none', 'held while the lease lasts');
  s.clock.set(new Date(START.getTime() + 5500));
  t.equal(await s.run(), 'delivered');
  t.equal(s.receiver.requests[0]!.headers['x-mp-inbound-attempt'], '2');
});

t.test('a 4xx other than 429 is dead-lettered at once', async (t) => {
  const s = await setup(t);
  s.receiver.answer({ status: 422, body: 'unknown mailbox' });
  const d = await insertInboundDelivery(s.sql, s.tenantId);
  t.equal(await s.run(), 'dead');
  t.match(await deliveryState(s.sql, d.deliveryId), {
    status: 'dead',
    attempts: 1,
    last_status: 422,
    last_error: 'HTTP 422: unknown mailbox (a 4xx answer is not retried)',
    next_attempt_at: null,
    dead_at: START,
    delivered_at: null,
  });
  t.equal(await s.run(), 'none', 'nothing left to retry');
  t.equal(s.receiver.requests.length, 1);
});

t.test('429 with Retry-After is deferred per the header; the pass then delivers', async (t) => {
  const s = await setup(t);
  s.receiver.answerNext({ status: 429, headers: { 'retry-after': '120' } });
  const d = await insertInboundDelivery(s.sql, s.tenantId);
  t.equal(await s.run(), 'retry');
  const due = new Date(START.getTime() + 120_000);
  t.match(await deliveryState(s.sql, d.deliveryId), { status: 'pending', attempts: 1, last_status: 429, last_error: 'HTTP 429', next_attempt_at: due });
  s.clock.set(new Date(due.getTime() - 1));
  t.equal(await s.run(), 'none', 'not due a millisecond early');
  t.equal(s.receiver.requests.length, 1, 'nothing sent early');

  s.clock.set(due);
  t.equal(await s.run(), 'delivered');
  t.match(await deliveryState(s.sql, d.deliveryId), { status: 'delivered', attempts: 2, last_status: 200, delivered_at: due });
  t.equal(s.receiver.requests[1]!.headers['x-mp-inbound-attempt'], '2');
  t.equal(s.receiver.requests[1]!.headers['x-mp-inbound-delivery'], d.deliveryId, 'the same delivery id on every attempt');
});

t.test('5xx: retried at +30 s, 5 min, 30 min, 2 h, 6 h, 24 h, and dead after the 7th attempt', async (t) => {
  const s = await setup(t);
  s.receiver.answer({ status: 503, body: 'maintenance' });
  const d = await insertInboundDelivery(s.sql, s.tenantId);
  const delays = [30, 300, 1800, 7200, 21600, 86400];
  let at = START;
  for (const [i, delay] of delays.entries()) {
    s.clock.set(new Date(at.getTime() - 1));
    if (i > 0) t.equal(await s.run(), 'none', `attempt ${i + 1} not before its time`);
    s.clock.set(at);
    t.equal(await s.run(), 'retry', `attempt ${i + 1}`);
    at = new Date(at.getTime() + delay * 1000);
    t.match(await deliveryState(s.sql, d.deliveryId), {
      status: 'pending',
      attempts: i + 1,
      last_status: 503,
      last_error: 'HTTP 503: maintenance',
      next_attempt_at: at,
    });
  }
  s.clock.set(at);
  t.equal(await s.run(), 'dead', 'attempt 7');
  t.match(await deliveryState(s.sql, d.deliveryId), {
    status: 'dead',
    attempts: 7,
    last_status: 503,
    last_error: 'HTTP 503: maintenance (gave up after 7 attempts)',
    next_attempt_at: null,
    last_attempt_at: at,
    dead_at: at,
  });
  t.same(
    s.receiver.requests.map((r) => r.headers['x-mp-inbound-attempt']),
    ['1', '2', '3', '4', '5', '6', '7'],
  );
  t.ok(s.receiver.requests.every((r) => signatureOk(r, s.secret)));
});

t.test('a timeout or a refused connection is retried with no status recorded', async (t) => {
  const s = await setup(t);
  s.receiver.answerNext({ hang: true });
  const d = await insertInboundDelivery(s.sql, s.tenantId);
  t.equal(await s.run(), 'retry');
  t.match(await deliveryState(s.sql, d.deliveryId), {
    status: 'pending',
    attempts: 1,
    last_status: null,
    last_error: 'no answer within 0.5 s',
    next_attempt_at: new Date(START.getTime() + 30_000),
  });

  await configureWebhook(s.sql, s.deps.vault, s.tenantId, { url: 'http://127.0.0.1:9/closed', secret: s.secret });
  s.clock.advance(30_000);
  t.equal(await s.run(), 'retry');
  t.match(await deliveryState(s.sql, d.deliveryId), { attempts: 2, last_status: null, last_error: /ECONNREFUSED/ });
});

t.test('webhook switched off, URL removed or never configured while the delivery waited: dead, nothing sent', async (t) => {
  const s = await setup(t);
  const d1 = await insertInboundDelivery(s.sql, s.tenantId);
  await configureWebhook(s.sql, s.deps.vault, s.tenantId, { url: s.receiver.url, enabled: false });
  t.equal(await s.run(), 'dead');
  t.match(await deliveryState(s.sql, d1.deliveryId), { status: 'dead', attempts: 1, last_status: null, last_error: 'webhook disabled', dead_at: START });

  const d2 = await insertInboundDelivery(s.sql, s.tenantId);
  await configureWebhook(s.sql, s.deps.vault, s.tenantId, { url: null, enabled: false });
  t.equal(await s.run(), 'dead');
  t.match(await deliveryState(s.sql, d2.deliveryId), { status: 'dead', last_error: 'webhook URL removed' });

  const other = await insertTenant(s.sql);
  const d3 = await insertInboundDelivery(s.sql, other);
  t.equal(await s.run(), 'dead');
  t.match(await deliveryState(s.sql, d3.deliveryId), { status: 'dead', last_error: 'webhook not configured' });
  t.equal(s.receiver.connections(), 0);
});

t.test('a rotated secret signs the next POST; the old one no longer verifies', async (t) => {
  const s = await setup(t);
  const actor = { type: 'system' as const, id: null };
  const rotated = await updateWebhookSettingsFor(s.deps, s.tenantId, actor, {}, { rotateSecret: true });
  t.ok(rotated.secret && rotated.secret !== s.secret);
  await insertInboundDelivery(s.sql, s.tenantId);
  t.equal(await s.run(), 'delivered');
  const req = s.receiver.requests[0]!;
  t.ok(signatureOk(req, rotated.secret!), 'verifies with the new secret');
  t.notOk(signatureOk(req, s.secret), 'not with the old one');
});

t.test('a secret that cannot be opened (sealed for another tenant) is a failed attempt, retried and visible', async (t) => {
  const s = await setup(t);
  const other = await insertTenant(s.sql);
  await configureWebhook(s.sql, s.deps.vault, other, { url: s.receiver.url });
  await s.sql`update inbound_webhooks set secret_sealed = (select secret_sealed from inbound_webhooks where tenant_id = ${s.tenantId})
              where tenant_id = ${other}`;
  const d = await insertInboundDelivery(s.sql, other);
  t.equal(await s.run(), 'retry');
  t.match(await deliveryState(s.sql, d.deliveryId), { status: 'pending', attempts: 1, last_error: /^the signing secret cannot be opened/ });
  t.equal(s.receiver.connections(), 0);
});
