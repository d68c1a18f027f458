// The OpenAPI document: 3.0.3, valid, covers every registered route with summary and description; the offline explorer.
import SwaggerParser from '@apidevtools/swagger-parser';
import t from 'tap';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { defineRoute } from '../../../api/route.js';
import { buildTestApp, call } from '../../helpers/app.js';

const API = '/api/v1';
const METHODS = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Every method + full URL the app serves, read from Fastify's route tree (the routes are registered
 * inside buildApp, before a test could add an onRoute hook).
 */
function registeredRoutes(app: FastifyInstance): { method: string; url: string }[] {
  const tree = app.printRoutes({ commonPrefix: false });
  const stack: string[] = [];
  const routes: { method: string; url: string }[] = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:[│ ] {3}| {4})*)(?:├── |└── )(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    if (!m[3]) continue;
    for (const method of m[3].split(', ')) routes.push({ method, url: stack.join('') });
  }
  return routes;
}

/** Fastify `/a/:id/b` → OpenAPI `/a/{id}/b`, relative to the server URL (which ends in /api/v1). */
function toDocPath(url: string): string {
  return url.slice(API.length).replace(/:([A-Za-z0-9_]+)/g, '{$1}') || '/';
}

t.test('the document is valid OpenAPI 3.0.3, version 1.0.0', async (t) => {
  const { app, config } = await buildTestApp(t);
  const res = await call(app, 'GET', '/openapi.json');
  t.equal(res.status, 200);
  t.match(res.headers['content-type'], /application\/json/);
  const doc = res.body;
  t.equal(doc.openapi, '3.0.3');
  t.equal(doc.info.version, '1.0.0');
  t.ok(doc.info.title);
  t.equal(doc.servers[0].url, new URL(API, config.publicUrl).toString(), 'server URL is the public URL + /api/v1');
  t.ok(doc.servers[0].url.endsWith(API));
  t.same(Object.keys(doc.components.securitySchemes).sort(), ['apiKey', 'bearerJwt', 'dashboardSession']);

  await t.resolves(SwaggerParser.validate(structuredClone(doc)), 'swagger-parser validates it');
  t.same((await call(app, 'GET', '/openapi.json')).body, doc, 'stable between requests');
});

t.test('every registered route is documented with summary, description and error responses', async (t) => {
  const { app } = await buildTestApp(t);
  const doc = (await call(app, 'GET', '/openapi.json')).body;
  const routes = registeredRoutes(app).filter(
    (r) => METHODS.has(r.method) && r.url.startsWith(`${API}/`) && !r.url.startsWith(`${API}/docs`) && r.url !== `${API}/openapi.json`,
  );
  t.ok(routes.length >= 8, `found ${routes.length} API routes`);
  const expected = [
    'POST /auth/register',
    'POST /auth/login',
    'GET /whoami',
    'GET /api-keys',
    'POST /api-keys',
    'DELETE /api-keys/{keyID}',
    'PATCH /api-keys/{keyID}/scopes',
    'GET /admin/tenants',
    'GET /admin/tenants/{id}',
  ];
  const found = routes.map((r) => `${r.method} ${toDocPath(r.url)}`);
  for (const e of expected) t.ok(found.includes(e), `route tree has ${e}`);

  for (const r of routes) {
    const path = toDocPath(r.url);
    const op = doc.paths[path]?.[r.method.toLowerCase()];
    t.ok(op, `${r.method} ${path} is in the document`);
    if (!op) continue;
    t.type(op.summary, 'string', `${r.method} ${path} has a summary`);
    t.ok(op.summary?.length > 3);
    t.type(op.description, 'string', `${r.method} ${path} has a description`);
    t.ok(op.description?.length > 10);
    t.ok(op.tags?.length, `${r.method} ${path} is tagged`);
    const codes = Object.keys(op.responses);
    t.ok(
      codes.some((c) => /^2\d\d$/.test(c)),
      `${r.method} ${path} documents its success`,
    );
    t.ok(codes.includes('422') && codes.includes('500'), `${r.method} ${path} documents errors`);
    for (const m of path.matchAll(/\{(\w+)\}/g)) {
      t.ok(
        op.parameters?.some((p: { in: string; name: string }) => p.in === 'path' && p.name === m[1]),
        `${r.method} ${path} declares path parameter ${m[1]}`,
      );
    }
  }

  // Nothing documented that the app does not serve, and no absolute /api/v1 paths (they are relative to servers[0]).
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    t.notOk(path.startsWith(API), `${path} is relative to the server URL`);
    for (const method of Object.keys(ops)) {
      if (!METHODS.has(method.toUpperCase())) continue;
      t.ok(found.includes(`${method.toUpperCase()} ${path}`), `documented ${method.toUpperCase()} ${path} exists`);
    }
  }
  t.notOk(doc.paths['/openapi.json'], 'the document route itself is hidden');
  t.notOk(
    Object.keys(doc.paths).some((p) => p.startsWith('/docs')),
    'the explorer routes are hidden',
  );
});

t.test('every operation has a unique operationId and a tag, for client generators', async (t) => {
  const { app } = await buildTestApp(t);
  const doc = (await call(app, 'GET', '/openapi.json')).body;
  const seen = new Map<string, string>();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, { operationId?: string; tags?: string[] }>>)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!METHODS.has(method.toUpperCase())) continue;
      const where = `${method.toUpperCase()} ${path}`;
      t.match(op.operationId, /^[a-z][A-Za-z0-9]*$/, `${where} has an operationId`);
      t.notOk(seen.has(op.operationId!), `${where}: operationId ${op.operationId} is not also ${seen.get(op.operationId!)}'s`);
      seen.set(op.operationId!, where);
      t.ok(op.tags?.length, `${where} is tagged`);
    }
  }
  t.equal(doc.paths['/campaigns/{id}/send'].post.operationId, 'postCampaignsByIdSend', 'derived from method and path');
  t.equal(doc.paths['/api-keys/{keyID}'].delete.operationId, 'deleteApiKeysByKeyID');
  t.equal(doc.paths['/sends/{id}/raw'].get.operationId, 'getSendsByIdRaw', 'routes outside defineRoute use the same scheme');
});

t.test('an explicit operationId overrides the derived one; a route without a tag is refused', async (t) => {
  const { app } = await buildTestApp(t);
  // Added before the app's first request, so the document includes them.
  defineRoute(app, {
    method: 'GET',
    url: '/api/v1/test-named',
    auth: 'public',
    tags: ['Test'],
    summary: 'Named route',
    description: 'An explicitly named operation.',
    operationId: 'fetchTheNamedThing',
    response: z.object({}),
    handler: async () => ({}),
  });
  t.throws(
    () =>
      defineRoute(app, {
        method: 'GET',
        url: '/api/v1/test-untagged',
        auth: 'public',
        tags: [],
        summary: 'Untagged',
        description: 'No tag at all.',
        response: z.object({}),
        handler: async () => ({}),
      }),
    /at least one tag/,
  );
  const doc = (await call(app, 'GET', '/openapi.json')).body;
  t.equal(doc.paths['/test-named'].get.operationId, 'fetchTheNamedThing');
  t.notOk(doc.paths['/test-untagged'], 'the untagged route was not registered');
});

t.test('the idempotent sends document Idempotency-Key and Idempotent-Replayed', async (t) => {
  const { app } = await buildTestApp(t);
  const doc = (await call(app, 'GET', '/openapi.json')).body;
  for (const path of ['/transactional/send', '/campaigns/{id}/send']) {
    const op = doc.paths[path].post;
    const header = op.parameters?.find((p: { in: string; name: string }) => p.in === 'header' && p.name === 'Idempotency-Key');
    t.ok(header, `POST ${path} declares the Idempotency-Key header`);
    t.equal(header?.required, false, 'optional');
    t.equal(header?.schema.maxLength, 255);
    const success = Object.entries(op.responses as Record<string, { headers?: Record<string, unknown> }>).filter(([code]) => /^2\d\d$/.test(code));
    t.ok(success.length > 0);
    for (const [code, answer] of success) t.ok(answer.headers?.['Idempotent-Replayed'], `POST ${path} ${code} declares Idempotent-Replayed`);
    t.notOk(op.responses['422'].headers, 'error answers carry no replay header');
  }
  t.notOk(
    doc.paths['/api-keys'].post.parameters?.some((p: { name: string }) => p.name === 'Idempotency-Key'),
    'other writes do not claim it',
  );
});

t.test('auth requirements are documented per route', async (t) => {
  const { app } = await buildTestApp(t);
  const doc = (await call(app, 'GET', '/openapi.json')).body;
  t.same(doc.paths['/auth/login'].post.security, [], 'login is public');
  t.same(doc.paths['/whoami'].get.security, [{ bearerJwt: [] }, { apiKey: [] }, { dashboardSession: [] }], 'whoami takes a JWT, a key or the dashboard cookie');
  t.same(doc.paths['/api-keys'].post.security, [{ bearerJwt: [] }, { dashboardSession: [] }], 'key management needs a user session');
  t.match(doc.paths['/admin/tenants'].get.description, /Super-admin only/);
  t.ok(doc.paths['/api-keys/{keyID}'].delete.responses['404'], 'declared 404 is documented');
  t.equal(doc.paths['/api-keys'].post.responses['201'] !== undefined, true, 'create documents 201');
  const body = doc.paths['/api-keys'].post.requestBody.content['application/json'].schema;
  t.same(body.required, ['name']);
  t.equal(body.additionalProperties, false, 'unknown fields are documented as refused');
});

t.test('the explorer and its assets are served locally', async (t) => {
  const { app } = await buildTestApp(t);
  for (const url of [`${API}/docs`, `${API}/docs/`]) {
    const page = await call(app, 'GET', url);
    t.equal(page.status, 200, `${url} is served`);
    t.match(page.headers['content-type'], /text\/html/);
    t.match(page.body, /swagger-ui/i);
    const assets = [...String(page.body).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    t.ok(assets.length > 0, 'the page references its assets');
    for (const asset of assets) t.notMatch(asset, /^(https?:)?\/\//, `${asset} is local`);
  }
  const base = `${API}/docs/`;
  const page = await call(app, 'GET', base);
  const assets = [...String(page.body).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => new URL(m[1]!, `http://local${base}`).pathname);
  for (const asset of new Set([...assets, `${API}/docs/static/swagger-ui-bundle.js`, `${API}/docs/static/swagger-ui.css`])) {
    const res = await call(app, 'GET', asset);
    t.equal(res.status, 200, `${asset} → 200`);
    t.ok(String(res.body).length > 0, `${asset} has content`);
  }
  const bundle = await call(app, 'GET', `${API}/docs/static/swagger-ui-bundle.js`);
  t.match(bundle.headers['content-type'], /javascript/);
  t.ok(String(bundle.body).length > 100_000, 'the full bundle, from the local package');
  const init = await call(app, 'GET', `${API}/docs/static/swagger-initializer.js`);
  t.match(init.body, /openapi\.json|\.\/json/, 'the explorer loads the local document');
  const json = await call(app, 'GET', `${API}/docs/json`);
  t.equal(json.status, 200);
  t.equal(json.body.openapi, '3.0.3', 'the explorer document is the same OpenAPI document');
});
