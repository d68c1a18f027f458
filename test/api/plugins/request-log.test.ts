// The API's request log: one 'api request' line per request with its caller, secret query values redacted by name or by shape, never a header or a body.
import t from 'tap';
import { PassThrough } from 'node:stream';
import { isSecretName, redactUrl } from '../../../api/plugins/request-log.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';

t.test('redactUrl: secret names and secret-shaped values lose their value, the rest is kept as sent', async (t) => {
  t.equal(redactUrl('/reset-password?token=abc'), '/reset-password?token=[redacted]');
  t.equal(redactUrl('/x?page=2&limit=10'), '/x?page=2&limit=10', 'nothing secret: unchanged');
  t.equal(redactUrl('/x'), '/x');
  for (const name of [
    'token',
    'access_token',
    'key',
    'apiKey',
    'api-key',
    'code',
    'password',
    'passwd',
    'pwd',
    'secret',
    'client_secret',
    'signature',
    'X-Amz-Signature',
    'sig',
    'x-sig',
    'auth',
    'Authorization',
  ]) {
    t.equal(redactUrl(`/x?${name}=s3cr3t&page=1`), `/x?${name}=[redacted]&page=1`, name);
  }
  t.notOk(isSecretName('design'), '`sig` inside a word is not a signature');
  t.equal(redactUrl('/x?to%6Ben=s3cr3t'), '/x?to%6Ben=[redacted]', 'a percent-encoded name is judged decoded');
  t.equal(redactUrl('/x?a=1&token=one&token=two'), '/x?a=1&token=[redacted]&token=[redacted]', 'every occurrence');
  t.equal(redactUrl('/x?token'), '/x?token', 'a name without a value has nothing to hide');
  t.equal(
    redactUrl('/x?q=mp_live_abc', (v) => v.startsWith('mp_live_')),
    '/x?q=[redacted]',
    'an API key under any name',
  );
  t.equal(redactUrl('/x?q=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig'), '/x?q=[redacted]', 'a JWT under any name');
});

t.test('one line per request, query secrets redacted, the caller named, no Authorization header or body', async (t) => {
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  const { app } = await buildTestApp(t, { log: createLogger('info', out) });
  const tenant = await registerTenant(app);
  const { key, id } = await createKey(app, tenant);
  text = '';

  const who = await call(app, 'GET', `/whoami?token=SECRET123&key=${key}`, { token: key, headers: { 'x-request-id': 'req-abc' } });
  const login = await call(app, 'POST', '/auth/login', { body: { email: tenant.email, password: tenant.password } });
  t.equal(login.status, 200);
  const unknown = await call(app, 'GET', '/no/such/path?password=hunter2');
  t.equal(unknown.status, 404);

  const lines = text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  t.same(
    lines.map((l) => l['msg']),
    ['api request', 'api request', 'api request'],
    'exactly one line per request',
  );
  t.match(lines[0], {
    level: 30,
    reqId: 'req-abc',
    method: 'GET',
    url: '/api/v1/whoami?token=[redacted]&key=[redacted]',
    status: who.status,
    principal: `api_key:${id}`,
    tenant_id: tenant.tenantId,
    ip: '127.0.0.1',
  });
  t.type(lines[0]!['ms'], 'number');
  t.match(lines[1], { method: 'POST', url: '/api/v1/auth/login', status: 200, principal: null, tenant_id: null });
  t.match(lines[2], { url: '/api/v1/no/such/path?password=[redacted]', status: 404 });
  for (const secret of ['SECRET123', key, tenant.password, tenant.token, 'hunter2']) t.notOk(text.includes(secret), 'no secret in the log');
  t.notOk(/authorization|content-type|user-agent/i.test(text), 'no request header');
});
