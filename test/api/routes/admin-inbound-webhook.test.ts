// The super-admin dead-letter queue of inbound webhooks: list (cursor, only dead, only that tenant), replay one (pending again and due at once, audited), 404s
// and access.
import t from 'tap';
import { deliverDueInboundWebhooks } from '../../../jobs/inbound-webhooks/worker.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken, type TestLike } from '../../helpers/app.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';
import { configureWebhook, deliveryState, insertInboundDelivery } from '../../jobs/inbound-webhooks/fixture.js';

const dlqUrl = (tenantId: string) => `/admin/tenants/${tenantId}/inbound-webhook-dlq`;

async function setup(t: TestLike) {
  const s = await buildTestApp(t, { env: { MAILPATH_CONFIG__WEBHOOKS__ALLOW_HTTP: 'true', MAILPATH_CONFIG__WEBHOOKS__ALLOW_PRIVATE_ADDRESSES: 'true' } });
  const receiver = await startWebhookReceiver(t);
  const admin = await superAdminToken(s.app);
  // One pass over the outbox; each test keeps one delivery due at a time, so this is its outcome.
  const run = async () => (await deliverDueInboundWebhooks(s.ctx)).outcomes.join(',');
  return { ...s, receiver, admin, run };
}

/** A delivery dead-lettered the real way: the receiver refuses it with a 4xx. */
async function deadDelivery(s: Awaited<ReturnType<typeof setup>>, tenantId: string) {
  s.receiver.answerNext({ status: 410, body: 'gone' });
  const d = await insertInboundDelivery(s.sql, tenantId);
  if ((await s.run()) !== 'dead') throw new Error('expected a dead delivery');
  return d;
}

t.test("the list holds only the tenant's dead deliveries, most recently dead first, with a cursor", async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const other = await registerTenant(s.app);
  await configureWebhook(s.sql, s.ctx.vault, owner.tenantId, { url: s.receiver.url });
  await configureWebhook(s.sql, s.ctx.vault, other.tenantId, { url: s.receiver.url });
  const first = await deadDelivery(s, owner.tenantId);
  const dead = [first];
  for (let i = 0; i < 2; i++) dead.push(await deadDelivery(s, owner.tenantId));
  // Distinct dead_at values, so the order is the test's and not a tie broken by id.
  for (const [i, d] of dead.entries())
    await s.sql`update inbound_webhook_deliveries set dead_at = ${new Date(Date.UTC(2026, 2, 1, 10, i))} where id = ${d.deliveryId}`;
  await insertInboundDelivery(s.sql, owner.tenantId);
  await s.run();
  // Pending, and not due while this test runs.
  await insertInboundDelivery(s.sql, owner.tenantId, { at: new Date(Date.now() + 3_600_000) });
  await deadDelivery(s, other.tenantId);

  const page1 = await call(s.app, 'GET', `${dlqUrl(owner.tenantId)}?limit=2`, { token: s.admin });
  t.equal(page1.status, 200);
  t.equal(page1.body.total, 3, "pending, delivered and other tenants' rows are not counted");
  t.same(
    page1.body.data.map((d: { id: string }) => d.id),
    [dead[2]!.deliveryId, dead[1]!.deliveryId],
  );
  t.match(page1.body.data[0], {
    id: dead[2]!.deliveryId,
    inbound_message_id: dead[2]!.messageId,
    recipient: dead[2]!.recipient,
    attempts: 1,
    last_status: 410,
    last_error: 'HTTP 410: gone (a 4xx answer is not retried)',
    created_at: String,
    last_attempt_at: String,
    dead_at: '2026-03-01T10:02:00.000Z',
  });
  t.type(page1.body.next_cursor, 'string');
  const page2 = await call(s.app, 'GET', `${dlqUrl(owner.tenantId)}?limit=2&after=${page1.body.next_cursor}`, { token: s.admin });
  t.same(
    page2.body.data.map((d: { id: string }) => d.id),
    [first.deliveryId],
  );
  t.equal(page2.body.next_cursor, null);
  t.equal((await call(s.app, 'GET', `${dlqUrl(owner.tenantId)}?after=garbage`, { token: s.admin })).status, 400);
  t.equal((await call(s.app, 'GET', `${dlqUrl(owner.tenantId)}?limit=500`, { token: s.admin })).status, 422);
});

t.test('replay puts one dead delivery back: pending, attempts reset, due at once, an audit row; then it is delivered', async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const other = await registerTenant(s.app);
  await configureWebhook(s.sql, s.ctx.vault, owner.tenantId, { url: s.receiver.url });
  const d = await deadDelivery(s, owner.tenantId);
  const replayUrl = `${dlqUrl(owner.tenantId)}/${d.deliveryId}/replay`;

  t.equal((await call(s.app, 'POST', `${dlqUrl(other.tenantId)}/${d.deliveryId}/replay`, { token: s.admin })).status, 404, "through another tenant's path");
  const res = await call(s.app, 'POST', replayUrl, { token: s.admin });
  t.equal(res.status, 200);
  t.same(res.body.data, { id: d.deliveryId, status: 'pending' });
  const revived = await deliveryState(s.sql, d.deliveryId);
  t.match(revived, { status: 'pending', attempts: 0, dead_at: null, last_status: 410 });
  t.ok(revived.next_attempt_at! <= new Date(), 'due at once');
  const audit = await s.sql<{ actor_type: string; action: string; resource_id: string }[]>`
    select actor_type, action, resource_id from audit_events where tenant_id = ${owner.tenantId} and action = 'inbound_webhook.delivery_replayed'`;
  t.same(audit, [{ actor_type: 'user', action: 'inbound_webhook.delivery_replayed', resource_id: d.deliveryId }]);
  t.equal((await call(s.app, 'GET', dlqUrl(owner.tenantId), { token: s.admin })).body.total, 0, 'no longer dead-lettered');

  const again = await call(s.app, 'POST', replayUrl, { token: s.admin });
  t.equal(again.status, 404, 'a pending delivery is not a dead letter');
  t.equal(again.body.error, 'not_found');

  t.equal(await s.run(), 'delivered');
  t.match(await deliveryState(s.sql, d.deliveryId), { status: 'delivered', attempts: 1, last_status: 200, last_error: null });
  t.equal(s.receiver.requests.length, 2);
  t.equal((await call(s.app, 'POST', replayUrl, { token: s.admin })).status, 404, 'nor a delivered one');
});

t.test('unknown tenants and deliveries are 404; only super-admins may call', async (t) => {
  const s = await setup(t);
  const owner = await registerTenant(s.app);
  const unknown = '00000000-0000-4000-8000-000000000000';
  for (const url of [dlqUrl(unknown), dlqUrl('not-a-uuid')]) {
    const res = await call(s.app, 'GET', url, { token: s.admin });
    t.equal(res.status, 404, url);
    t.equal(res.body.error, 'not_found');
  }
  for (const url of [`${dlqUrl(unknown)}/${unknown}/replay`, `${dlqUrl(owner.tenantId)}/${unknown}/replay`, `${dlqUrl(owner.tenantId)}/nope/replay`]) {
    t.equal((await call(s.app, 'POST', url, { token: s.admin })).status, 404, url);
  }
  const key = await createKey(s.app, owner);
  for (const token of [owner.token, key.key]) {
    t.equal((await call(s.app, 'GET', dlqUrl(owner.tenantId), { token })).status, 403);
    t.equal((await call(s.app, 'POST', `${dlqUrl(owner.tenantId)}/${unknown}/replay`, { token })).status, 403);
  }
  t.equal((await call(s.app, 'GET', dlqUrl(owner.tenantId))).status, 401);
});
