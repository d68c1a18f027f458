// /webhooks over HTTP: create (secret once), read, change, delete, the cap, validation and the URL policy, scopes, tenant isolation, the test event.
import t from 'tap';
import { buildTestApp, call, countRows } from '../../helpers/app.js';
import { buildWebhookApp, createEndpoint, recordEvents, registerTenant } from '../../helpers/event-webhooks.js';
import { MAX_ENDPOINTS_PER_TENANT } from '../../../shared/webhooks/events/service.js';

// One app for the file (the machine is shared): each test registers a tenant of its own.
const s = await buildWebhookApp(t);

t.test('create shows the secret once; read, list, change and delete, each audited', async (t) => {
  const tenant = await registerTenant(s.app);
  const created = await call(s.app, 'POST', '/webhooks', {
    token: tenant.token,
    body: { url: 'http://127.0.0.1:9/hook', event_types: ['delivered', 'bounced', 'delivered'], description: '  CRM sync  ' },
  });
  t.equal(created.status, 201);
  t.match(created.body.data, {
    id: String,
    url: 'http://127.0.0.1:9/hook',
    description: 'CRM sync',
    event_types: ['delivered', 'bounced'],
    enabled: true,
    secret: /^whsec_/,
    secret_revealed_once: true,
    secret_rotated_at: null,
    previous_secret_expires_at: null,
  });
  const id = created.body.data.id;
  const read = await call(s.app, 'GET', `/webhooks/${id}`, { token: tenant.token });
  t.match(read.body.data, { id, secret: null, secret_revealed_once: false });
  const list = await call(s.app, 'GET', '/webhooks', { token: tenant.token });
  t.equal(list.body.total, 1);
  t.equal(list.body.data[0].secret, null, 'lists never carry the secret');
  t.notOk(JSON.stringify(await s.sql`select * from event_webhooks`).includes(created.body.data.secret), 'the secret is sealed at rest');

  const changed = await call(s.app, 'PATCH', `/webhooks/${id}`, { token: tenant.token, body: { event_types: ['inbound'], enabled: false, description: null } });
  t.equal(changed.status, 200);
  t.match(changed.body.data, { event_types: ['inbound'], enabled: false, description: null, secret: null });
  const same = await call(s.app, 'PATCH', `/webhooks/${id}`, { token: tenant.token, body: { enabled: false } });
  t.equal(same.status, 200);

  const removed = await call(s.app, 'DELETE', `/webhooks/${id}`, { token: tenant.token });
  t.same(removed.body.data, { deleted: true, id });
  t.equal((await call(s.app, 'GET', `/webhooks/${id}`, { token: tenant.token })).status, 404);
  const actions = await s.sql<
    { action: string }[]
  >`select action from audit_events where resource_type = 'event_webhook' and tenant_id = ${tenant.tenantId} order by id`;
  t.same(
    actions.map((a) => a.action),
    ['event_webhook.created', 'event_webhook.updated', 'event_webhook.deleted'],
    'a change that changes nothing is not audited',
  );
});

t.test('validation: event types, description, unexpected fields, the cap; deleting an endpoint deletes its deliveries', async (t) => {
  const tenant = await registerTenant(s.app);
  const post = (body: unknown) => call(s.app, 'POST', '/webhooks', { token: tenant.token, body });
  const empty = await post({ url: 'http://127.0.0.1:9/', event_types: [] });
  t.match(empty, { status: 422, body: { error: 'validation_error', message: /event_types/ } });
  const unknown = await post({ url: 'http://127.0.0.1:9/', event_types: ['dropped'] });
  t.match(unknown, { status: 422, body: { error: 'validation_error', message: /event_types/ } });
  const long = await post({ url: 'http://127.0.0.1:9/', event_types: ['sent'], description: 'x'.repeat(501) });
  t.match(long, { status: 422, body: { error: 'validation_error', message: /description/ } });
  const extra = await post({ url: 'http://127.0.0.1:9/', event_types: ['sent'], secret: 'whsec_mine' });
  t.match(extra, { status: 400, body: { error: 'bad_request' } });
  const noUrl = await post({ event_types: ['sent'] });
  t.match(noUrl, { status: 422, body: { error: 'validation_error', message: /url/ } });

  const ids: string[] = [];
  for (let i = 0; i < MAX_ENDPOINTS_PER_TENANT; i++)
    ids.push((await createEndpoint(s.app, tenant, { url: `http://127.0.0.1:9/${i}`, event_types: ['sent'] })).id);
  t.match(await post({ url: 'http://127.0.0.1:9/x', event_types: ['sent'] }), { status: 409, body: { error: 'conflict' } });

  await recordEvents(s.sql, tenant.tenantId, ['send']);
  t.equal(await countRows(s.sql, 'event_webhook_deliveries', tenant.tenantId), MAX_ENDPOINTS_PER_TENANT, 'one delivery per subscribed endpoint');
  await call(s.app, 'DELETE', `/webhooks/${ids[0]}`, { token: tenant.token });
  t.equal(await countRows(s.sql, 'event_webhook_deliveries', tenant.tenantId), MAX_ENDPOINTS_PER_TENANT - 1);
});

t.test("the inbound webhook's URL policy: https only and public addresses, unless the operator allows loopback", async (t) => {
  const strict = await buildTestApp(t);
  const tenant = await registerTenant(strict.app);
  const post = (url: string) => call(strict.app, 'POST', '/webhooks', { token: tenant.token, body: { url, event_types: ['sent'] } });
  t.match(await post('http://hooks.example.com/x'), { status: 422, body: { error: 'validation_error', message: /url: must be an https:\/\/ URL/ } });
  t.match(await post('https://127.0.0.1/x'), { status: 422, body: { error: 'validation_error', message: /url: .*loopback/ } });
  t.match(await post('https://10.1.2.3/x'), { status: 422, body: { error: 'validation_error', message: /private/ } });
  t.match(await post('https://[::ffff:169.254.169.254]/x'), { status: 422, body: { error: 'validation_error', message: /link-local/ } });
  t.match(await post('https://user:pw@hooks.example.com/x'), { status: 422, body: { message: /user name or password/ } });
  t.equal(await countRows(strict.sql, 'event_webhooks', tenant.tenantId), 0);
});

t.test('the routes are in the OpenAPI document', async (t) => {
  const doc = await call(s.app, 'GET', '/openapi.json');
  for (const path of [
    '/webhooks',
    '/webhooks/{id}',
    '/webhooks/{id}/rotate-secret',
    '/webhooks/{id}/test',
    '/webhooks/{id}/deliveries',
    '/webhooks/dead-letters',
    '/webhooks/dead-letters/{id}/replay',
  ]) {
    t.ok(doc.body.paths[`/api/v1${path}`] ?? doc.body.paths[path], `${path} documented`);
  }
});
