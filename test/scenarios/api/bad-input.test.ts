// Bad input sweep: every endpoint gets malformed JSON, missing fields, wrong types, oversize strings, unknown
// fields, bad credentials and another tenant's ids; each answers with the right slug and nothing is written.
import t from 'tap';
import type { Sql } from '../../../shared/db/connection.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
type Credential = 'none' | 'owner' | 'other' | 'ownerKey' | 'admin';

interface Case {
  label: string;
  credential: Credential;
  body?: unknown;
  raw?: string;
  /** Replaces the endpoint's URL (bad path or query). */
  url?: string;
  status: number;
  slug: string;
  /** For 422: the field the message must start with; for 400: a name the message must contain. */
  names?: string;
}

interface Endpoint {
  method: Method;
  url: string;
  /** A valid body: the base every body case mutates. */
  valid?: Record<string, unknown>;
  cases: Case[];
}

const long = (n: number) => 'x'.repeat(n);

/** The cases every JSON-body endpoint gets, derived from a valid body and its fields' limits. */
function bodyCases(
  credential: Credential,
  valid: Record<string, unknown>,
  fields: { name: string; required: boolean; wrong: unknown[]; oversize?: unknown; nul?: unknown; nulNames?: string }[],
): Case[] {
  const cases: Case[] = [
    { label: 'truncated JSON', credential, raw: JSON.stringify(valid).slice(0, -3), status: 400, slug: 'bad_request' },
    { label: 'single-quoted JSON', credential, raw: JSON.stringify(valid).replace(/"/g, "'"), status: 400, slug: 'bad_request' },
    { label: 'empty body', credential, raw: '', status: 400, slug: 'bad_request' },
    { label: 'JSON array', credential, body: [valid], status: 400, slug: 'bad_request' },
    { label: 'JSON string', credential, body: 'hello', status: 400, slug: 'bad_request' },
    { label: 'JSON null', credential, raw: 'null', status: 400, slug: 'bad_request' },
    { label: 'unknown field', credential, body: { ...valid, is_admin: true }, status: 400, slug: 'bad_request', names: 'is_admin' },
    { label: 'unknown field only', credential, body: { surprise: 1 }, status: 400, slug: 'bad_request', names: 'surprise' },
    { label: '__proto__ field', credential, raw: JSON.stringify(valid).replace(/^\{/, '{"__proto__":{"is_admin":true},'), status: 400, slug: 'bad_request' },
    { label: 'form-encoded', credential, raw: 'a=b', status: 415, slug: 'unsupported_media_type' },
  ];
  for (const f of fields) {
    if (f.required) {
      const { [f.name]: _omit, ...rest } = valid;
      cases.push({ label: `missing ${f.name}`, credential, body: rest, status: 422, slug: 'validation_error', names: `${f.name}: is required` });
    }
    for (const w of f.wrong) {
      cases.push({
        label: `${f.name} = ${JSON.stringify(w).slice(0, 30)}`,
        credential,
        body: { ...valid, [f.name]: w },
        status: 422,
        slug: 'validation_error',
        names: f.name,
      });
    }
    if (f.oversize !== undefined) {
      cases.push({ label: `oversize ${f.name}`, credential, body: { ...valid, [f.name]: f.oversize }, status: 422, slug: 'validation_error', names: f.name });
    }
    // PostgreSQL text cannot hold NUL: refused up front, never a 500 from the database.
    if (f.nul !== undefined) {
      cases.push({
        label: `NUL in ${f.name}`,
        credential,
        body: { ...valid, [f.name]: f.nul },
        status: 422,
        slug: 'validation_error',
        names: f.nulNames ?? f.name,
      });
    }
  }
  return cases;
}

/** Credential cases for an authenticated endpoint. */
function authCases(mode: 'user' | 'super_admin', body?: unknown): Case[] {
  const b = body === undefined ? {} : { body };
  const cases: Case[] = [
    { label: 'no credential', credential: 'none', ...b, status: 401, slug: 'unauthenticated' },
    { label: 'API key where a user session is needed', credential: 'ownerKey', ...b, status: 403, slug: 'forbidden' },
  ];
  if (mode === 'super_admin') cases.push({ label: "a normal tenant's session", credential: 'owner', ...b, status: 403, slug: 'forbidden' });
  return cases;
}

/** What "nothing was written" is checked against: row counts and the mutable state of keys and tenants. */
async function snapshot(sql: Sql): Promise<Record<string, unknown>> {
  const [row] = await sql`
    select
      (select count(*)::int from tenants) as tenants,
      (select count(*)::int from users) as users,
      (select count(*)::int from api_keys) as api_keys,
      (select count(*)::int from audit_events) as audit_events,
      (select coalesce(max(id), 0)::text from audit_events) as last_audit_id,
      (select md5(coalesce(string_agg(id::text || ':' || scopes::text || ':' || coalesce(revoked_at::text, '-'), ',' order by id), ''))
         from api_keys) as api_key_state,
      (select md5(coalesce(string_agg(id::text || ':' || status || ':' || plan_id || ':' || is_sandbox::text || ':' || updated_at::text, ',' order by id), ''))
         from tenants) as tenant_state,
      (select md5(coalesce(string_agg(id::text || ':' || email || ':' || password_hash || ':' || updated_at::text, ',' order by id), ''))
         from users) as user_state`;
  return { ...row };
}

t.test('bad input on every endpoint: right slug, nothing written', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const owner = await registerTenant(app);
  const other = await registerTenant(app);
  const ownerKey = await createKey(app, owner, { name: 'owner key', scopes: ['contacts:read'] });
  const otherKey = await createKey(app, other, { name: 'other key' });
  const tokens: Record<Credential, string | undefined> = { none: undefined, owner: owner.token, other: other.token, ownerKey: ownerKey.key, admin };
  const unknownId = '00000000-0000-4000-8000-000000000000';

  const register = { tenant_name: 'Fresh Co', tenant_slug: 'fresh-co', email: 'fresh@example.test', password: 'Correct-horse-42' };
  const login = { email: owner.email, password: owner.password };
  const newKey = { name: 'new key', scopes: ['contacts:read'], mode: 'live' };
  const scopes = { scopes: ['lists:read'] };

  const endpoints: Endpoint[] = [
    {
      method: 'POST',
      url: '/auth/register',
      cases: [
        ...bodyCases('none', register, [
          { name: 'tenant_name', required: true, wrong: [42, null, ['Acme'], ''], oversize: long(121), nul: 'Fresh\u0000Co' },
          { name: 'tenant_slug', required: true, wrong: [{}, 7, 'Bad Slug!', 'admin'], oversize: long(41), nul: 'fresh\u0000co' },
          { name: 'email', required: true, wrong: [true, 'not-an-email', 'a@'], oversize: `${long(250)}@example.test`, nul: 'fresh\u0000@example.test' },
          {
            name: 'password',
            required: true,
            wrong: [12345678901, 'short', 'alllowercaseletters'],
            oversize: `Aa1${long(200)}`,
            nul: 'Correct-horse-42\u0000',
          },
          { name: 'first_name', required: false, wrong: [5, ''], oversize: long(101), nul: 'Ada\u0000' },
        ]),
        // A taken slug or email is a conflict, and also writes nothing.
        { label: 'taken slug', credential: 'none', body: { ...register, tenant_slug: owner.slug }, status: 409, slug: 'conflict', names: 'tenant_slug' },
        { label: 'taken email', credential: 'none', body: { ...register, email: owner.email.toUpperCase() }, status: 409, slug: 'conflict', names: 'email' },
      ],
    },
    {
      method: 'POST',
      url: '/auth/login',
      cases: [
        ...bodyCases('none', login, [
          { name: 'email', required: true, wrong: [1, null, { $ne: '' }], oversize: `${long(250)}@example.test`, nul: `${owner.email}\u0000` },
          { name: 'password', required: true, wrong: [1, null, [owner.password]], oversize: long(201), nul: `${owner.password}\u0000` },
        ]),
        { label: 'wrong password', credential: 'none', body: { ...login, password: 'Wrong-horse-42' }, status: 401, slug: 'unauthenticated' },
      ],
    },
    {
      method: 'POST',
      url: '/api-keys',
      cases: [
        ...authCases('user', newKey),
        ...bodyCases('owner', newKey, [
          { name: 'name', required: true, wrong: [1, null, '', '   ', ['k']], oversize: long(101), nul: 'new\u0000key' },
          {
            name: 'scopes',
            required: false,
            wrong: ['contacts:read', [1], [null], { 0: 'contacts:read' }],
            oversize: [long(65)],
            nul: ['contacts:read', 'lists:read\u0000'],
            nulNames: 'scopes.1',
          },
          { name: 'mode', required: false, wrong: ['production', 'LIVE', true] },
        ]),
        {
          label: 'too many scopes',
          credential: 'owner',
          body: { ...newKey, scopes: Array(40).fill('contacts:read') },
          status: 422,
          slug: 'validation_error',
          names: 'scopes',
        },
        {
          label: 'unknown scope',
          credential: 'owner',
          body: { ...newKey, scopes: ['contacts:read', 'contacts:delete'] },
          status: 400,
          slug: 'bad_request',
          names: 'contacts:delete',
        },
        { label: 'wildcard scope', credential: 'owner', body: { ...newKey, scopes: ['*'] }, status: 400, slug: 'bad_request' },
      ],
    },
    {
      method: 'PATCH',
      url: `/api-keys/${ownerKey.id}/scopes`,
      cases: [
        ...authCases('user', scopes),
        ...bodyCases('owner', scopes, [
          { name: 'scopes', required: true, wrong: [null, 'lists:read', [1], {}], oversize: [long(65)], nul: ['\u0000'], nulNames: 'scopes.0' },
        ]),
        {
          label: 'unknown scope',
          credential: 'owner',
          body: { scopes: ['lists:read', 'lists:delete'] },
          status: 400,
          slug: 'bad_request',
          names: 'lists:delete',
        },
        { label: "another tenant's key", credential: 'other', body: scopes, status: 404, slug: 'not_found' },
        {
          label: "own session, other tenant's key id",
          credential: 'owner',
          url: `/api-keys/${otherKey.id}/scopes`,
          body: scopes,
          status: 404,
          slug: 'not_found',
        },
        { label: 'unknown id', credential: 'owner', url: `/api-keys/${unknownId}/scopes`, body: scopes, status: 404, slug: 'not_found' },
        { label: 'malformed id', credential: 'owner', url: '/api-keys/not-a-uuid/scopes', body: scopes, status: 404, slug: 'not_found' },
        { label: 'oversize id', credential: 'owner', url: `/api-keys/${long(65)}/scopes`, body: scopes, status: 422, slug: 'validation_error', names: 'keyID' },
      ],
    },
    {
      method: 'DELETE',
      url: `/api-keys/${ownerKey.id}`,
      cases: [
        ...authCases('user'),
        { label: 'malformed JSON body', credential: 'owner', raw: '{"force": tru', status: 400, slug: 'bad_request' },
        { label: 'unknown body field', credential: 'owner', body: { force: true }, status: 400, slug: 'bad_request' },
        { label: 'form-encoded body', credential: 'owner', raw: 'force=1', status: 415, slug: 'unsupported_media_type' },
        { label: "another tenant's key", credential: 'other', status: 404, slug: 'not_found' },
        { label: "own session, other tenant's key id", credential: 'owner', url: `/api-keys/${otherKey.id}`, status: 404, slug: 'not_found' },
        { label: 'unknown id', credential: 'owner', url: `/api-keys/${unknownId}`, status: 404, slug: 'not_found' },
        { label: 'malformed id', credential: 'owner', url: "/api-keys/1'%20or%20'1'='1", status: 404, slug: 'not_found' },
        { label: 'oversize id', credential: 'owner', url: `/api-keys/${long(65)}`, status: 422, slug: 'validation_error', names: 'keyID' },
        { label: 'NUL in id', credential: 'owner', url: `/api-keys/${ownerKey.id}%00`, status: 422, slug: 'validation_error', names: 'keyID' },
      ],
    },
    {
      method: 'GET',
      url: '/admin/tenants',
      cases: [
        ...authCases('super_admin'),
        ...[
          ['limit=bad', 'limit'],
          ['limit=0', 'limit'],
          ['limit=201', 'limit'],
          ['limit=1.5', 'limit'],
          ['limit=', 'limit'],
          [`limit=${'9'.repeat(400)}`, 'limit'],
          ['offset=-1', 'offset'],
          ['offset=abc', 'offset'],
        ].map(
          ([q, field]): Case => ({
            label: `?${q!.slice(0, 20)}`,
            credential: 'admin',
            url: `/admin/tenants?${q}`,
            status: 422,
            slug: 'validation_error',
            names: field!,
          }),
        ),
      ],
    },
    {
      method: 'GET',
      url: `/admin/tenants/${owner.tenantId}`,
      cases: [
        ...authCases('super_admin'),
        { label: 'unknown id', credential: 'admin', url: `/admin/tenants/${unknownId}`, status: 404, slug: 'not_found' },
        { label: 'malformed id', credential: 'admin', url: '/admin/tenants/not-a-uuid', status: 404, slug: 'not_found' },
        { label: 'oversize id', credential: 'admin', url: `/admin/tenants/${long(65)}`, status: 422, slug: 'validation_error', names: 'id' },
        { label: 'NUL in id', credential: 'admin', url: '/admin/tenants/%00', status: 422, slug: 'validation_error', names: 'id' },
      ],
    },
  ];

  let checked = 0;
  for (const ep of endpoints) {
    for (const c of ep.cases) {
      const label = `${ep.method} ${ep.url.replace(/[0-9a-f-]{36}/g, '{id}')} — ${c.label}`;
      const before = await snapshot(sql);
      const token = tokens[c.credential];
      const res = await call(app, ep.method, c.url ?? ep.url, {
        ...(token ? { token } : {}),
        ...(c.raw !== undefined ? { raw: c.raw } : {}),
        ...(c.body !== undefined ? { body: c.body } : {}),
        ...(c.slug === 'unsupported_media_type' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' } } : {}),
      });
      t.equal(res.status, c.status, `${label}: ${c.status}`);
      t.equal(res.body?.error, c.slug, `${label}: ${c.slug}`);
      t.same(Object.keys(res.body ?? {}).sort(), ['error', 'message', 'ok'], `${label}: error envelope`);
      t.notMatch(String(res.body?.message), /\n\s*at |\/work\/|node_modules|\.[jt]s:\d+/, `${label}: no stack or paths`);
      if (c.names) {
        const named =
          c.status === 422 ? new RegExp(`^${c.names.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`) : new RegExp(c.names.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
        t.match(res.body?.message, named, `${label}: message names ${c.names}`);
      }
      t.same(await snapshot(sql), before, `${label}: nothing written`);
      checked++;
    }
  }
  t.ok(checked > 100, `${checked} bad requests checked`);

  // The keys the sweep aimed at are untouched and still work.
  const who = await call(app, 'GET', '/whoami', { token: ownerKey.key });
  t.equal(who.status, 200);
  t.same(who.body.data.key.scopes, ['contacts:read']);
  t.equal((await call(app, 'GET', '/whoami', { token: otherKey.key })).status, 200);
  const relogin = await call(app, 'POST', '/auth/login', { body: login });
  t.equal(relogin.status, 200, "the owner's password is unchanged");
});
