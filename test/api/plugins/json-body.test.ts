// Deeply nested JSON bodies (4,000 and 100,000 levels of arrays and of objects) on every route: 400 naming the
// depth limit before anything walks them, never a 500; the parser's depth and prototype-poisoning checks themselves.
import t from 'tap';
import { parseJsonBody, refusalOf } from '../../../api/plugins/json-body.js';
import { AppError } from '../../../shared/kernel/errors.js';
import { buildTestApp, call, registerTenant, superAdminToken } from '../../helpers/app.js';

const nestedArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

t.test('the depth check: the limit is accepted, one more level refused; poisoning keys found at any level', async (t) => {
  t.equal(refusalOf(JSON.parse(nestedArrays(64)), 64), undefined, '64 levels of arrays pass a limit of 64');
  t.equal(refusalOf(JSON.parse(nestedObjects(64)), 64), undefined, '64 levels of objects pass');
  t.equal(refusalOf(JSON.parse(nestedArrays(65)), 64), 'too_deep');
  t.equal(refusalOf(JSON.parse(nestedObjects(65)), 64), 'too_deep');
  t.equal(refusalOf(JSON.parse(`{"a":[1,{"b":${nestedArrays(62)}}],"c":"x"}`), 64), 'too_deep', 'mixed: the deepest branch counts');
  t.equal(refusalOf(JSON.parse(`{"a":[1,{"b":${nestedArrays(61)}}],"c":"x"}`), 64), undefined);
  for (const scalar of ['1', '"x"', 'null', 'true', '[]', '{}']) t.equal(refusalOf(JSON.parse(scalar), 64), undefined, `${scalar}: fine`);

  t.equal(refusalOf(JSON.parse('{"a":{"b":[{"__proto__":{"x":1}}]}}'), 64), 'proto', '__proto__ deep inside');
  t.equal(refusalOf(JSON.parse('{"a":{"constructor":{"prototype":{"x":1}}}}'), 64), 'constructor', 'constructor.prototype deep inside');
  t.equal(refusalOf(JSON.parse('{"constructor":"fine","prototype":1}'), 64), undefined, 'a plain constructor field is allowed');
  t.equal(refusalOf(JSON.parse('{"\\u005f_proto__":{}}'), 64), 'proto', 'an escaped __proto__ is still __proto__');

  const refusal = (text: string) => {
    try {
      parseJsonBody(text, 64);
      return undefined;
    } catch (err) {
      return err instanceof AppError ? `${err.status} ${err.slug}: ${err.message}` : String(err);
    }
  };
  t.match(refusal(nestedObjects(100_000)), /^400 bad_request: JSON body is nested deeper than 64 levels/);
  t.match(refusal('{"a": '), /^400 bad_request: malformed JSON body$/);
  t.equal(refusal(''), undefined, 'an empty body is no body');
  t.equal(parseJsonBody(' \r\n', 64), undefined, 'so is one of white space');
  t.match(refusal('{"__proto__":{"admin":true}}'), /"__proto__" key/);
  t.same(parseJsonBody('\ufeff{"a":[1,2]}', 64), { a: [1, 2] }, 'a byte-order mark is skipped');
});

t.test('a body-less POST with content-type application/json is answered as one without a body', async (t) => {
  const { app } = await buildTestApp(t);
  const owner = await registerTenant(app);
  for (const url of ['/domains/00000000-0000-4000-8000-000000000000/verify', '/api-keys']) {
    const bare = await call(app, 'POST', url, { token: owner.token });
    const typed = await call(app, 'POST', url, { token: owner.token, raw: '' });
    t.not(typed.body?.message ?? '', 'malformed JSON body', `${url}: no malformed-body refusal`);
    t.same([typed.status, typed.body?.error], [bare.status, bare.body?.error], `${url}: ${bare.status} ${bare.body?.error}, as without a body`);
  }
});

t.test('every route refuses a deeply nested body with 400 naming the limit, never 500', async (t) => {
  const { app } = await buildTestApp(t, {
    env: { MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__BULK: '100000', MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__SEND: '100000' },
  });
  const owner = await registerTenant(app);
  const admin = await superAdminToken(app);
  const doc = (await call(app, 'GET', '/openapi.json')).body as { paths: Record<string, Record<string, unknown>> };
  const bodies: [string, string][] = [
    ['4,000 levels of arrays', nestedArrays(4000)],
    ['4,000 levels of objects', nestedObjects(4000)],
    ['100,000 levels of arrays', nestedArrays(100_000)],
    ['100,000 levels of objects', nestedObjects(100_000)],
    ['4,000 levels inside a field', `{"variables":${nestedObjects(4000)}}`],
  ];

  const signedIn = async (user: typeof owner): Promise<string> =>
    (await call(app, 'POST', '/auth/login', { body: { email: user.email, password: user.password } })).body.data.token;
  let routes = 0;
  for (const [path, operations] of Object.entries(doc.paths)) {
    const url = path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
    for (const method of Object.keys(operations).map((m) => m.toUpperCase())) {
      if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) continue;
      // Signing out ends the session it is sent with: that route gets a session of its own.
      const token = url.startsWith('/admin') ? admin : url === '/auth/session' && method === 'DELETE' ? await signedIn(owner) : owner.token;
      const m = method as 'POST';
      // What the route answers before reading any body (a credential it refuses): the deep body gets the same.
      const control = await call(app, m, url, { token, raw: '{}' });
      for (const [label, raw] of bodies) {
        const res = await call(app, m, url, { token, raw });
        const what = `${method} ${path}, ${label}`;
        if (control.status === 401 || control.status === 403) {
          t.equal(res.status, control.status, `${what}: refused before the body, as without it`);
          continue;
        }
        if (control.status === 415) {
          // A route whose body is not JSON (a CSV or NDJSON import, a text/plain hash list) refuses any JSON body by
          // its media type, before a JSON parser could walk it.
          t.equal(res.status, 415, `${what}: refused by media type, as a shallow JSON body`);
          t.equal(res.body?.error, 'unsupported_media_type', `${what}: unsupported_media_type`);
          continue;
        }
        t.equal(res.status, 400, `${what}: 400`);
        t.equal(res.body?.error, 'bad_request', `${what}: bad_request`);
        t.match(res.body?.message, /nested deeper than 64 levels/, `${what}: names the limit`);
      }
      routes++;
    }
  }
  t.ok(routes > 30, `${routes} routes with a body tried`);

  // The probe's case: a template render with deep variables.
  const created = await call(app, 'POST', '/templates', { token: owner.token, body: { name: 'deep', subject: 'Hi {{ a }}', body_text: 'x' } });
  t.equal(created.status, 201, 'a template');
  const render = await call(app, 'POST', `/templates/${created.body.data.id}/render`, { token: owner.token, raw: `{"variables":${nestedObjects(4000)}}` });
  t.equal(render.status, 400);
  t.match(render.body.message, /nested deeper than 64 levels/);
  const shallow = await call(app, 'POST', `/templates/${created.body.data.id}/render`, { token: owner.token, raw: `{"variables":{"a":${nestedObjects(60)}}}` });
  t.not(shallow.status, 500, `within the limit the route answers as usual (${shallow.status})`);
});
