// The error envelope everywhere: stable slugs and statuses, fields named (every one, a misspelt one with the field it is nearest to), no stack traces or
// file paths.
import t from 'tap';
import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import { knownKeysAt, validationToAppError } from '../../../api/plugins/errors.js';
import { defineRoute } from '../../../api/route.js';
import { AppError } from '../../../shared/kernel/errors.js';
import { closest, editDistance } from '../../../shared/kernel/suggest.js';
import { buildTestApp, call, registerTenant, type ApiResponse } from '../../helpers/app.js';

const BODY_LIMIT = 4096;

/** Routes that fail on purpose (added before the app's first request). */
function addFailingRoutes(app: FastifyInstance): void {
  defineRoute(app, {
    method: 'GET',
    url: '/api/v1/test-crash',
    auth: 'public',
    tags: ['Test'],
    summary: 'Throws an unexpected error',
    description: 'A bug in a handler.',
    response: z.object({}),
    handler: async () => {
      throw new Error(`connection to /work/main/shared/db/secret.ts:12 failed: password=hunter2`);
    },
  });
  defineRoute(app, {
    method: 'GET',
    url: '/api/v1/test-unavailable',
    auth: 'public',
    tags: ['Test'],
    summary: 'Throws an AppError',
    description: 'A known failure.',
    response: z.object({}),
    handler: async () => {
      throw new AppError('rate_limited', 'slow down', { headers: { 'retry-after': '7' } });
    },
  });
}

/** The assertions the helpers below use, from a test or a subtest. */
type Tap = Pick<typeof t, 'equal' | 'same' | 'type' | 'notMatch'>;

/** Asserts the error envelope, with nothing that looks like a stack trace or a source path. */
function assertError(t: Tap, res: ApiResponse, status: number, slug: string, label: string): void {
  t.equal(res.status, status, `${label}: status ${status}`);
  t.same(Object.keys(res.body ?? {}).sort(), ['error', 'message', 'ok'], `${label}: envelope keys`);
  t.equal(res.body?.ok, false, `${label}: ok false`);
  t.equal(res.body?.error, slug, `${label}: slug ${slug}`);
  t.type(res.body?.message, 'string');
  assertNoLeak(t, res, label);
}

function assertNoLeak(t: Tap, res: ApiResponse, label: string): void {
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body);
  t.notMatch(text, /\bat [\w$.<>]+ \(|\n\s+at |^\s*at /m, `${label}: no stack lines`);
  t.notMatch(text, /\/work\/|node_modules|\.ts:\d+|\.js:\d+|file:\/\//, `${label}: no file paths`);
  t.notMatch(text, /"stack"|"statusCode"|"code":"FST_/, `${label}: no framework error fields`);
}

t.test('every failure answers with the envelope and the right slug', async (t) => {
  const { app } = await buildTestApp(t, { env: { MAILPATH_CONFIG__LIMITS__REQUEST__BODY_LIMIT_BYTES: String(BODY_LIMIT) } });
  addFailingRoutes(app);
  const owner = await registerTenant(app);
  const auth = { token: owner.token };

  // Malformed JSON: 400 bad_request.
  for (const raw of ['{"name": ', '{name: "x"}', "{'name':'x'}", '', 'nul', '{"name":"x"}}', '\u0000']) {
    assertError(t, await call(app, 'POST', '/api-keys', { ...auth, raw }), 400, 'bad_request', `malformed JSON ${JSON.stringify(raw)}`);
  }
  const malformed = await call(app, 'POST', '/api-keys', { ...auth, raw: '{"name": ' });
  t.match(malformed.body.message, /JSON/);
  // Prototype poisoning is refused, and the message says so (not "malformed JSON").
  const proto = await call(app, 'POST', '/api-keys', { ...auth, raw: '{"name":"x","__proto__":{"admin":true}}' });
  assertError(t, proto, 400, 'bad_request', '__proto__');
  t.match(proto.body.message, /"__proto__" key/);
  const ctor = await call(app, 'POST', '/api-keys', { ...auth, raw: '{"name":"x","constructor":{"prototype":{"admin":true}}}' });
  assertError(t, ctor, 400, 'bad_request', 'constructor.prototype');
  t.match(ctor.body.message, /"constructor" key holding "prototype"/);
  // Not an object.
  for (const raw of ['[]', '"name"', '42', 'null', 'true']) {
    assertError(t, await call(app, 'POST', '/api-keys', { ...auth, raw }), 400, 'bad_request', `JSON ${raw} instead of an object`);
  }

  // Unknown fields: 400 bad_request naming them.
  const unknown = await call(app, 'POST', '/api-keys', { ...auth, body: { name: 'x', admin: true } });
  assertError(t, unknown, 400, 'bad_request', 'unknown field');
  t.match(unknown.body.message, /admin/);
  const unknownLogin = await call(app, 'POST', '/auth/login', { body: { email: 'a@b.test', password: 'x', remember_me: true } });
  assertError(t, unknownLogin, 400, 'bad_request', 'unknown login field');
  t.match(unknownLogin.body.message, /remember_me/);

  // Wrong and missing fields: 422 validation_error naming the field.
  const wrong: [string, string, unknown, string][] = [
    ['POST', '/api-keys', { name: 42 }, 'name'],
    ['POST', '/api-keys', { name: 'x', scopes: 'contacts:read' }, 'scopes'],
    ['POST', '/api-keys', { name: 'x', scopes: [7] }, 'scopes.0'],
    ['POST', '/api-keys', { name: 'x', mode: 'production' }, 'mode'],
    ['POST', '/api-keys', { name: '   ' }, 'name'],
    ['POST', '/auth/register', { tenant_name: 'A', tenant_slug: 'acme-x', email: 'nope', password: 'Correct-horse-42' }, 'email'],
  ];
  for (const [method, url, body, field] of wrong) {
    const res = await call(app, method as 'POST', url, { ...auth, body });
    assertError(t, res, 422, 'validation_error', `${url} ${JSON.stringify(body)}`);
    t.match(res.body.message, new RegExp(`^${field.replace('.', '\\.')}:`), `names ${field}`);
  }
  const missing: [string, unknown, string][] = [
    ['/api-keys', {}, 'name'],
    ['/auth/login', { email: 'a@b.test' }, 'password'],
    ['/auth/register', { tenant_name: 'A', email: 'a@b.test', password: 'Correct-horse-42' }, 'tenant_slug'],
  ];
  for (const [url, body, field] of missing) {
    const res = await call(app, 'POST', url, { ...auth, body });
    assertError(t, res, 422, 'validation_error', `${url} without ${field}`);
    t.match(res.body.message, new RegExp(`^${field}: is required`), `names missing ${field}`);
  }
  assertError(
    t,
    await call(app, 'PATCH', '/api-keys/00000000-0000-4000-8000-000000000000/scopes', { ...auth, body: {} }),
    422,
    'validation_error',
    'PATCH without scopes',
  );

  // Unknown paths: 404 not_found.
  for (const [method, url] of [
    ['GET', '/api/v1/nope'],
    ['GET', '/nope'],
    ['GET', '/'],
    ['GET', '/api/v2/whoami'],
    ['POST', '/api/v1/nope'],
    ['DELETE', '/api/v1/api-keys/00000000-0000-4000-8000-000000000000/nope'],
  ] as const) {
    assertError(t, await call(app, method, url, { ...auth, body: {} }), 404, 'not_found', `${method} ${url}`);
  }
  // A known path with a method it is not served with: 405 method_not_allowed, Allow listing the methods it takes.
  for (const [method, url, allow] of [
    ['POST', '/api/v1/whoami', 'GET, HEAD'],
    ['DELETE', '/api/v1/api-keys', 'GET, HEAD, POST'],
    ['GET', '/api/v1/campaigns/00000000-0000-4000-8000-000000000000/send', 'POST'],
    ['PUT', '/api/v1/api-keys/00000000-0000-4000-8000-000000000000', 'DELETE'],
  ] as const) {
    const res = await call(app, method, url, { ...auth, body: {} });
    assertError(t, res, 405, 'method_not_allowed', `${method} ${url}`);
    t.equal(res.headers['allow'], allow, `${method} ${url}: Allow lists the path's methods`);
  }
  const wrongMethod = await call(app, 'POST', '/api/v1/whoami?secret=1', { ...auth, body: {} });
  t.equal(wrongMethod.body.message, 'POST is not allowed on /api/v1/whoami; allowed: GET, HEAD', 'the query string is not echoed');
  const unknownRoute = await call(app, 'GET', '/api/v1/nope?secret=1');
  t.equal(unknownRoute.body.message, 'no route GET /api/v1/nope', 'the query string is not echoed');

  // Wrong content type: 415.
  for (const type of ['application/x-www-form-urlencoded', 'application/xml', 'multipart/form-data; boundary=x', 'image/png']) {
    assertError(t, await call(app, 'POST', '/api-keys', { ...auth, raw: 'name=x', headers: { 'content-type': type } }), 415, 'unsupported_media_type', type);
  }
  // JSON is the only accepted body type: text/plain is refused like any other.
  assertError(
    t,
    await call(app, 'POST', '/api-keys', { ...auth, raw: '{"name":"x"}', headers: { 'content-type': 'text/plain' } }),
    415,
    'unsupported_media_type',
    'text/plain',
  );

  // Body over the limit: 413.
  const big = await call(app, 'POST', '/api-keys', { ...auth, body: { name: 'x', pad: 'y'.repeat(BODY_LIMIT) } });
  assertError(t, big, 413, 'payload_too_large', 'oversize body');
  const bigLogin = await call(app, 'POST', '/auth/login', { body: { email: 'a@b.test', password: 'p'.repeat(BODY_LIMIT * 2) } });
  assertError(t, bigLogin, 413, 'payload_too_large', 'oversize public body');

  // NUL characters (PostgreSQL text cannot hold them): 422 naming the field, not a database 500.
  const nul = await call(app, 'POST', '/api-keys', { ...auth, body: { name: 'a\u0000b' } });
  assertError(t, nul, 422, 'validation_error', 'NUL in a field');
  t.match(nul.body.message, /^name: must not contain NUL/);
  const nulLogin = await call(app, 'POST', '/auth/login', { body: { email: 'a\u0000@b.test', password: 'x' } });
  assertError(t, nulLogin, 422, 'validation_error', 'NUL in a login field');
  t.match(nulLogin.body.message, /^email/);

  // Errors raised by Fastify plugins keep their 4xx status in the envelope (not a 500).
  for (const url of ['/api/v1/docs/static/%00', '/api/v1/docs/static/..%5c..%5cpackage.json']) {
    assertError(t, await call(app, 'GET', url), 403, 'forbidden', `explorer asset ${url}`);
  }
  assertError(t, await call(app, 'GET', '/api/v1/docs/static/missing.js'), 404, 'not_found', 'missing explorer asset');

  // Credentials: 401 / 403.
  assertError(t, await call(app, 'GET', '/api-keys'), 401, 'unauthenticated', 'no credential');
  assertError(t, await call(app, 'GET', '/admin/tenants', auth), 403, 'forbidden', 'not a super-admin');

  // A handler bug: 500 internal, with none of the error's text.
  const crash = await call(app, 'GET', '/test-crash');
  assertError(t, crash, 500, 'internal', 'unexpected error');
  t.equal(crash.body.message, 'internal server error');
  t.notMatch(JSON.stringify(crash.body), /hunter2|secret/, 'the error text is not exposed');

  // A known AppError keeps its slug, status and headers.
  const limited = await call(app, 'GET', '/test-unavailable');
  assertError(t, limited, 429, 'rate_limited', 'AppError');
  t.equal(limited.headers['retry-after'], '7');
});

t.test('success responses use the envelope', async (t) => {
  const { app } = await buildTestApp(t);
  const owner = await registerTenant(app);
  const res = await call(app, 'GET', '/api-keys', { token: owner.token });
  t.same(Object.keys(res.body).sort(), ['data', 'ok']);
  t.equal(res.body.ok, true);
  t.match(res.headers['content-type'], /^application\/json/);
});

t.test('a body sent to a route that takes none is refused, not ignored', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const owner = await registerTenant(app);
  const created = await call(app, 'POST', '/api-keys', { token: owner.token, body: { name: 'k' } });
  const id = created.body.data.id;
  const res = await call(app, 'DELETE', `/api-keys/${id}`, { token: owner.token, body: { force: true } });
  assertError(t, res, 400, 'bad_request', 'DELETE with fields');
  const [row] = await sql`select revoked_at from api_keys where id = ${id}`;
  t.equal(row!.revoked_at, null, 'the key was not revoked');
  const emptyObject = await call(app, 'DELETE', `/api-keys/${id}`, { token: owner.token, body: {} });
  t.equal(emptyObject.status, 200, 'an empty object is no body');
});

t.test('a URL that is not valid percent-encoding gets the envelope', async (t) => {
  const { app } = await buildTestApp(t);
  const res = await call(app, 'GET', '/api/v1/whoami/%E0%A4%A');
  assertError(t, res, 400, 'bad_request', 'bad URL');
});

t.test('validation names every problem (up to ten), and an unknown field the known one it is nearest to', async (t) => {
  const { app } = await buildTestApp(t);
  const owner = await registerTenant(app);
  const typo = await call(app, 'POST', '/api-keys', { token: owner.token, body: { nmae: 'x', colour: 'red' } });
  assertError(t, typo, 400, 'bad_request', 'misspelt field');
  t.equal(typo.body.message, 'unexpected field(s) in body: nmae (did you mean name?), colour');
  const several = await call(app, 'POST', '/auth/register', { body: { tenant_name: 42, tenant_slug: 'acme-y', email: 'nope', password: 'Correct-horse-42' } });
  assertError(t, several, 422, 'validation_error', 'several wrong fields');
  t.match(several.body.message, /^tenant_name: .+; email: .+/, 'each wrong field named, the first first');
  t.notMatch(several.body.message, /more problem/);

  const schema = z.strictObject({
    name: z.string(),
    target: z.strictObject({ list_id: z.string(), segment_id: z.string() }).nullable().optional(),
    rules: z.array(z.strictObject({ field: z.string(), operator: z.string() })).default([]),
  });
  t.same(knownKeysAt(schema, ''), ['name', 'target', 'rules']);
  t.same(knownKeysAt(schema, '/target'), ['list_id', 'segment_id'], 'through nullable and optional');
  t.same(knownKeysAt(schema, '/rules/3'), ['field', 'operator'], 'through default and an array');
  t.same(knownKeysAt(schema, '/nothing/here'), [], 'an unknown path: none');
  const many = validationToAppError(
    Array.from({ length: 12 }, (_, i) => ({ keyword: 'invalid_type', instancePath: `/f${i}`, message: 'bad' })),
    'body',
  );
  t.match(many.message, /^f0: bad; f1: bad; .*; f9: bad \(and 2 more problems\)$/);
  t.equal(closest('x'.repeat(65), ['x'.repeat(64)]), undefined, 'a name too long to be a typo is not compared');
  t.equal(closest('from', ['from_email', 'subject']), undefined, 'a different word is no typo');
  t.equal(closest('Subjet', ['from_email', 'subject']), 'subject');
});

t.test('edit distance counts a swap of neighbours as one edit', async (t) => {
  t.equal(editDistance('nmae', 'name'), 1);
  t.equal(editDistance('kitten', 'sitting'), 3);
  t.equal(editDistance('', 'abc'), 3);
  t.equal(editDistance('same', 'same'), 0);
});
