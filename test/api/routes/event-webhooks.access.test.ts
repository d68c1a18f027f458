// /webhooks over HTTP, who may call what: scopes, tenant isolation (404 everywhere), and the signed test event.
import t from 'tap';
import { call, createKey } from '../../helpers/app.js';
import { buildWebhookApp, createEndpoint, recordEvents, registerTenant, verifyNode } from '../../helpers/event-webhooks.js';
import { assertForeign404 } from '../../helpers/isolation.js';
import { startWebhookReceiver } from '../../helpers/webhook-receiver.js';
import { deliverDueEventWebhooks } from '../../../jobs/event-webhooks/worker.js';

// One app for the file (the machine is shared): each test registers tenants of its own.
const s = await buildWebhookApp(t);

t.test('scopes: reads need events:read; changes need a session or an unrestricted key', async (t) => {
  const tenant = await registerTenant(s.app);
  const { id } = await createEndpoint(s.app, tenant, { url: 'http://127.0.0.1:9/', event_types: ['sent'] });
  const reader = (await createKey(s.app, tenant, { scopes: ['events:read'] })).key;
  const contacts = (await createKey(s.app, tenant, { scopes: ['contacts:read'] })).key;
  const full = (await createKey(s.app, tenant)).key;
  for (const url of ['/webhooks', `/webhooks/${id}`, `/webhooks/${id}/deliveries`, '/webhooks/dead-letters']) {
    t.equal((await call(s.app, 'GET', url, { token: reader })).status, 200, `events:read reads ${url}`);
    t.match(await call(s.app, 'GET', url, { token: contacts }), { status: 403, body: { error: 'invalid_scope' } }, `contacts:read cannot read ${url}`);
  }
  const writes: [method: 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown][] = [
    ['POST', '/webhooks', { url: 'http://127.0.0.1:9/', event_types: ['sent'] }],
    ['PATCH', `/webhooks/${id}`, { enabled: false }],
    ['POST', `/webhooks/${id}/rotate-secret`],
    ['POST', `/webhooks/${id}/test`],
    ['POST', '/webhooks/dead-letters/00000000-0000-4000-8000-000000000000/replay'],
    ['DELETE', `/webhooks/${id}`],
  ];
  for (const [method, url, body] of writes) {
    const res = await call(s.app, method, url, { token: reader, ...(body ? { body } : {}) });
    t.match(res, { status: 403, body: { error: 'invalid_scope' } }, `a scoped key cannot ${method} ${url}`);
  }
  t.equal(
    (await call(s.app, 'POST', '/webhooks', { token: full, body: { url: 'http://127.0.0.1:9/', event_types: ['sent'] } })).status,
    201,
    'an unrestricted key can',
  );
  t.equal((await call(s.app, 'GET', '/webhooks', { token: reader })).body.total, 2);
});

t.test("another tenant's endpoints, deliveries and dead letters are 404 on every route, and absent from its lists", async (t) => {
  const receiver = await startWebhookReceiver(t);
  const owner = await registerTenant(s.app);
  const other = await registerTenant(s.app);
  const { id } = await createEndpoint(s.app, owner, { url: receiver.url, event_types: ['sent'] });
  receiver.answer({ status: 400 });
  await recordEvents(s.sql, owner.tenantId, ['send']);
  await deliverDueEventWebhooks(s.ctx);
  const [dead] = await s.sql<{ id: string }[]>`select id from event_webhook_deliveries where status = 'dead' and tenant_id = ${owner.tenantId}`;
  const otherKey = (await createKey(s.app, other)).key;
  const foreign = [
    { method: 'GET' as const, url: `/webhooks/${id}` },
    { method: 'PATCH' as const, url: `/webhooks/${id}`, body: { enabled: false } },
    { method: 'POST' as const, url: `/webhooks/${id}/rotate-secret` },
    { method: 'POST' as const, url: `/webhooks/${id}/test` },
    { method: 'GET' as const, url: `/webhooks/${id}/deliveries` },
    { method: 'POST' as const, url: `/webhooks/dead-letters/${dead!.id}/replay` },
    { method: 'DELETE' as const, url: `/webhooks/${id}` },
    { method: 'GET' as const, url: '/webhooks/not-a-uuid' },
  ];
  await assertForeign404(t, s.app, other.token, foreign);
  await assertForeign404(t, s.app, otherKey, foreign);
  t.equal((await call(s.app, 'GET', '/webhooks', { token: other.token })).body.total, 0);
  t.equal((await call(s.app, 'GET', '/webhooks/dead-letters', { token: other.token })).body.total, 0);
  const still = await call(s.app, 'GET', `/webhooks/${id}`, { token: owner.token });
  t.match(still.body.data, { enabled: true }, 'the foreign PATCH changed nothing');
  t.equal(receiver.requests.length, 1, 'the foreign test and replay sent nothing');
  t.equal((await call(s.app, 'GET', '/webhooks/dead-letters', { token: owner.token })).body.total, 1, 'the foreign replay revived nothing');
});

t.test('POST /webhooks/{id}/test signs a test event like real ones and reports the answer; nothing is logged', async (t) => {
  const receiver = await startWebhookReceiver(t);
  const tenant = await registerTenant(s.app);
  const { id, secret } = await createEndpoint(s.app, tenant, { url: receiver.url, event_types: ['sent'], enabled: false });
  const ok = await call(s.app, 'POST', `/webhooks/${id}/test`, { token: tenant.token });
  t.equal(ok.status, 200);
  t.match(ok.body.data, { delivered: true, http_status: 200, duration_ms: Number, error: null, webhook_id: String });
  const req = receiver.requests[0]!;
  t.equal(req.headers['webhook-id'], ok.body.data.webhook_id);
  t.equal(verifyNode(secret, req), 1, "signed with the endpoint's secret");
  t.match(JSON.parse(req.body.toString()), { type: 'test', data: { webhook_id: id } });

  receiver.answerNext({ status: 500, body: 'boom' });
  const failed = await call(s.app, 'POST', `/webhooks/${id}/test`, { token: tenant.token });
  t.match(failed.body.data, { delivered: false, http_status: 500, error: 'HTTP 500: boom' });
  t.equal((await call(s.app, 'GET', `/webhooks/${id}/deliveries`, { token: tenant.token })).body.total, 0, 'tests are not in the delivery log');
});
