// The generated TypeScript client (clients/typescript: openapi-fetch over openapi-typescript's types) against a live server: register, create a test key,
// add a domain, send in test mode, list the events, upload an import.
import t from 'tap';
import { createMailpathClient } from '../../clients/typescript/index.js';
import { liveServer, newcomerNames } from './live-server.js';

t.test('register, key, domain, send in test mode, events', async (t) => {
  const { baseUrl } = await liveServer(t);
  const names = newcomerNames();
  const anonymous = createMailpathClient({ baseUrl });

  const registered = await anonymous.POST('/auth/register', {
    body: { tenant_name: names.tenant_name, tenant_slug: names.tenant_slug, email: names.email, password: names.password },
  });
  t.equal(registered.response.status, 201);
  const session = registered.data!.data;
  t.match(session, { token: String, tenant_id: String, user_id: String });

  const owner = createMailpathClient({ baseUrl, token: session.token });
  const created = await owner.POST('/api-keys', { body: { name: 'ts client', mode: 'test' } });
  t.equal(created.response.status, 201);
  const key = created.data!.data;
  t.equal(key.mode, 'test');
  t.match(key.key, /^mp_test_/);

  const client = createMailpathClient({ baseUrl, token: key.key });
  const whoami = await client.GET('/whoami');
  t.equal(whoami.data!.data.credential, 'api_key');

  const domain = await client.POST('/domains', { body: { name: names.domain } });
  t.equal(domain.response.status, 201);
  t.equal(domain.data!.data.name, names.domain);

  const sent = await client.POST('/transactional/send', {
    body: { to: 'ann@example.org', from_email: `hello@${names.domain}`, subject: 'From the TypeScript client', body_text: 'Hello!' },
  });
  t.ok(sent.response.status >= 200 && sent.response.status < 300, `send answered ${sent.response.status}`);
  const messageId = sent.data!.data.message_id;
  t.equal(sent.data!.data.status, 'simulated', 'a test key simulates the send');

  const events = await client.GET('/events', { params: { query: { message_id: messageId } } });
  t.equal(events.response.status, 200);
  t.match(events.data!.data, [{ type: 'send', message_id: messageId }], 'the send event');
  t.equal(events.data!.total, 1);

  // A file body and a CSV answer, typed by their media types.
  const upload = await client.POST('/contacts/imports', {
    params: { query: { on_existing: 'skip' } },
    body: 'email,first_name\nann@example.org,Ann\nnot-an-address,Bob\n',
    bodySerializer: (csv) => csv,
    headers: { 'content-type': 'text/csv' },
  });
  t.equal(upload.response.status, 202, 'a CSV file sent as the request body');
  const errorsCsv = await client.GET('/contacts/imports/{id}/errors.csv', { params: { path: { id: upload.data!.data.id } }, parseAs: 'text' });
  t.equal(errorsCsv.response.status, 200);
  t.match(errorsCsv.response.headers.get('content-type'), /^text\/csv/);
  t.match(errorsCsv.data, /^line,reason\r?\n/, 'the CSV answer as text');

  const refused = await client.GET('/admin/tenants');
  t.equal(refused.response.status, 403);
  t.equal(refused.error!.error, 'forbidden', 'errors come back typed as the error envelope');
});
