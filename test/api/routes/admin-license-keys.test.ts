// Super-admin license keys: who may call the routes, issuing and listing, revocation (one and in bulk, with its audit rows), and what validation says after
// revocation, after expiry and for a tampered key.
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken } from '../../helpers/app.js';

const T0 = new Date('2031-05-01T12:00:00Z');

const validate = async (app: Parameters<typeof call>[0], key: string) => (await call(app, 'POST', '/license/validate', { body: { key } })).body.data;

/** The token with one claim changed and the original signature kept. */
function tampered(token: string, change: (claims: Record<string, unknown>) => void): string {
  const [header, payload, signature] = token.split('.');
  const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>;
  change(claims);
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
}

t.test('every license-key route is for super-admins only', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const tenant = await registerTenant(app);
  const apiKey = await createKey(app, tenant);
  const issued = await call(app, 'POST', '/admin/license-keys', { token: admin, body: { plan_id: 'pro' } });
  t.equal(issued.status, 201);
  const { id, key } = issued.body.data;
  const routes: [method: 'GET' | 'POST', url: string, body?: unknown][] = [
    ['GET', '/admin/license-keys'],
    ['POST', '/admin/license-keys', { plan_id: 'pro' }],
    ['POST', `/admin/license-keys/${id}/revoke`],
    ['POST', '/admin/license-keys/bulk/revoke', { keys: [key] }],
  ];
  for (const [method, url, body] of routes) {
    const none = await call(app, method, url, { body });
    t.equal(none.status, 401, `${method} ${url} without a credential → 401`);
    for (const [label, token] of [
      ['a tenant owner JWT', tenant.token],
      ['a tenant API key', apiKey.key],
    ] as const) {
      const res = await call(app, method, url, { token, body });
      t.equal(res.status, 403, `${method} ${url} with ${label} → 403`);
      t.equal(res.body.error, 'forbidden');
    }
  }
  t.equal((await sql`select 1 from license_keys`).length, 1, 'no key issued by a tenant');
  t.equal((await validate(app, key)).valid, true, 'and none revoked');
});

t.test('issue, list, validate; a revoked key fails its next validation; revoking again writes no audit row', async (t) => {
  const clock = new ManualClock(T0);
  const { app, sql } = await buildTestApp(t, { clock });
  const admin = await superAdminToken(app);
  const tenant = await registerTenant(app);

  const forTenant = await call(app, 'POST', '/admin/license-keys', {
    token: admin,
    body: { plan_id: 'scale', tenant_id: tenant.tenantId, expires_at: '2032-05-01T12:00:00+02:00' },
  });
  t.equal(forTenant.status, 201);
  t.match(forTenant.body.data, { plan_id: 'scale', tenant_id: tenant.tenantId, status: 'active', expires_at: '2032-05-01T10:00:00.000Z', revoked_at: null });
  t.match(forTenant.body.data.key, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a compact JWS');
  const open = await call(app, 'POST', '/admin/license-keys', { token: admin, body: { plan_id: 'pro' } });
  t.match(open.body.data, { plan_id: 'pro', tenant_id: null, expires_at: null });

  const listed = await call(app, 'GET', '/admin/license-keys', { token: admin });
  t.equal(listed.status, 200);
  t.equal(listed.body.data.total, 2);
  t.same(listed.body.data.items.map((i: { id: string }) => i.id).sort(), [forTenant.body.data.id, open.body.data.id].sort());
  const filtered = await call(app, 'GET', `/admin/license-keys?tenant_id=${tenant.tenantId}`, { token: admin });
  t.same(
    filtered.body.data.items.map((i: { id: string }) => i.id),
    [forTenant.body.data.id],
    'tenant_id filter',
  );

  const good = await validate(app, forTenant.body.data.key);
  t.same(good, {
    valid: true,
    reason: null,
    license: {
      id: forTenant.body.data.id,
      plan_id: 'scale',
      tenant_id: tenant.tenantId,
      issued_at: T0.toISOString(),
      expires_at: '2032-05-01T10:00:00.000Z',
      issuer: 'https://localhost:8443',
    },
  });
  const created = await sql`select tenant_id, actor_type, metadata from audit_events where action = 'super_admin.license_key_created' order by id`;
  t.equal(created.length, 2, 'each issue is audited');
  t.equal(created[0]!['tenant_id'], tenant.tenantId);
  t.equal(created[0]!['metadata'].plan_id, 'scale');

  // Revoke by the key itself (a path parameter of a few hundred characters).
  const revoked = await call(app, 'POST', `/admin/license-keys/${forTenant.body.data.key}/revoke`, { token: admin });
  t.equal(revoked.status, 200);
  t.same(revoked.body.data, { status: 'revoked' });
  t.same(await validate(app, forTenant.body.data.key), { valid: false, reason: 'revoked', license: null }, 'fails its next validation');
  const again = await call(app, 'POST', `/admin/license-keys/${forTenant.body.data.id}/revoke`, { token: admin });
  t.same(again.body.data, { status: 'already_revoked' }, 'by id, already revoked');
  const revokeRows = await sql`select resource_id, tenant_id from audit_events where action = 'super_admin.license_key_revoked'`;
  t.equal(revokeRows.length, 1, 'one audit row for the revocation, none for the repeat');
  t.equal(revokeRows[0]!['resource_id'], forTenant.body.data.id);
  const [row] = await sql`select revoked_at from license_keys where id = ${forTenant.body.data.id}`;
  t.equal(row!['revoked_at'].toISOString(), T0.toISOString(), 'revoked_at set from the clock');
  const afterList = await call(app, 'GET', `/admin/license-keys?tenant_id=${tenant.tenantId}`, { token: admin });
  t.match(afterList.body.data.items[0], { status: 'revoked', revoked_at: T0.toISOString() });

  t.equal((await call(app, 'POST', '/admin/license-keys/00000000-0000-4000-8000-000000000000/revoke', { token: admin })).status, 404, 'unknown id → 404');
  t.equal((await call(app, 'POST', '/admin/license-keys/not-a-key/revoke', { token: admin })).status, 404, 'unknown key → 404');
  t.equal((await validate(app, open.body.data.key)).valid, true, 'the other key is untouched');
});

t.test('create validates plan, tenant and expiry', async (t) => {
  const clock = new ManualClock(T0);
  const { app, sql } = await buildTestApp(t, { clock });
  const admin = await superAdminToken(app);
  const cases: [body: unknown, status: number, field: string][] = [
    [{}, 422, 'plan_id'],
    [{ plan_id: 'gold' }, 422, 'plan_id'],
    [{ plan_id: 'pro', tenant_id: '00000000-0000-4000-8000-000000000000' }, 422, 'tenant_id'],
    [{ plan_id: 'pro', tenant_id: 'nope' }, 422, 'tenant_id'],
    [{ plan_id: 'pro', expires_at: '2031-05-01T11:59:59Z' }, 422, 'expires_at'],
    [{ plan_id: 'pro', expires_at: 'tomorrow' }, 422, 'expires_at'],
  ];
  for (const [body, status, field] of cases) {
    const res = await call(app, 'POST', '/admin/license-keys', { token: admin, body });
    t.equal(res.status, status, JSON.stringify(body));
    t.match(res.body.message, field);
  }
  t.equal((await call(app, 'POST', '/admin/license-keys', { token: admin, body: { plan_id: 'pro', seats: 3 } })).status, 400, 'unexpected field → 400');
  t.equal((await sql`select 1 from license_keys`).length, 0, 'nothing issued');
  t.equal((await sql`select 1 from audit_events where action like 'super_admin.license%'`).length, 0, 'nothing audited');
});

t.test('validation fails after expiry (injected clock) and for a tampered or foreign key', async (t) => {
  const clock = new ManualClock(T0);
  const { app } = await buildTestApp(t, { clock });
  const admin = await superAdminToken(app);
  const res = await call(app, 'POST', '/admin/license-keys', { token: admin, body: { plan_id: 'starter', expires_at: '2031-05-01T13:00:00Z' } });
  const key: string = res.body.data.key;
  t.equal((await validate(app, key)).valid, true, 'valid before its expiry');

  t.same(
    await validate(
      app,
      tampered(key, (c) => (c['plan_id'] = 'scale')),
    ),
    { valid: false, reason: 'invalid_signature', license: null },
    'plan changed',
  );
  t.same(
    await validate(
      app,
      tampered(key, (c) => delete c['exp']),
    ),
    { valid: false, reason: 'invalid_signature', license: null },
    'expiry removed',
  );
  const [h, p, s] = key.split('.');
  const flipped = `${s![0] === 'A' ? 'B' : 'A'}${s!.slice(1)}`;
  t.same((await validate(app, `${h}.${p}.${flipped}`)).reason, 'invalid_signature', 'signature changed');
  t.same((await validate(app, 'not.a.key')).reason, 'malformed');
  t.same((await validate(app, 'plain text')).reason, 'malformed');
  const foreignHeader = Buffer.from(JSON.stringify({ alg: 'EdDSA', typ: 'mailpath-license+jwt', kid: 'ed25519-elsewhere' })).toString('base64url');
  t.same((await validate(app, `${foreignHeader}.${p}.${s}`)).reason, 'invalid_signature', 'a kid this Mailpath never had');

  clock.set(new Date('2031-05-01T12:59:59Z'));
  t.equal((await validate(app, key)).valid, true, 'valid one second before');
  clock.set(new Date('2031-05-01T13:00:00Z'));
  t.same(await validate(app, key), { valid: false, reason: 'expired', license: null }, 'expired at its expiry');
  const listed = await call(app, 'GET', '/admin/license-keys', { token: admin });
  t.equal(listed.body.data.items[0].status, 'expired');

  const pub = await call(app, 'GET', '/license/public-key');
  t.equal(pub.status, 200);
  t.match(pub.body.data, { alg: 'EdDSA', kid: res.body.data.kid, jwk: { kty: 'OKP', crv: 'Ed25519', kid: res.body.data.kid } });
  t.notOk('d' in pub.body.data.jwk, 'no private part');
});

t.test('a key issued to a tenant stops validating when the tenant is deleted', async (t) => {
  const { app } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const tenant = await registerTenant(app);
  const res = await call(app, 'POST', '/admin/license-keys', { token: admin, body: { plan_id: 'pro', tenant_id: tenant.tenantId } });
  t.equal((await call(app, 'DELETE', `/admin/tenants/${tenant.tenantId}`, { token: admin })).status, 200);
  t.same((await validate(app, res.body.data.key)).reason, 'unknown');
});

t.test('POST /admin/license-keys/bulk/revoke: per-row results, at most 200 keys, already_revoked writes no audit row', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const keys: { id: string; key: string }[] = [];
  for (let i = 0; i < 3; i++) keys.push((await call(app, 'POST', '/admin/license-keys', { token: admin, body: { plan_id: 'pro' } })).body.data);
  t.equal((await call(app, 'POST', `/admin/license-keys/${keys[0]!.id}/revoke`, { token: admin })).status, 200);

  const tooMany = await call(app, 'POST', '/admin/license-keys/bulk/revoke', { token: admin, body: { keys: Array.from({ length: 201 }, (_, i) => `k${i}`) } });
  t.equal(tooMany.status, 422, '201 keys → 422');
  t.equal(tooMany.body.error, 'validation_error');
  t.equal((await call(app, 'POST', '/admin/license-keys/bulk/revoke', { token: admin, body: { keys: [] } })).status, 422, 'no keys → 422');
  const max = await call(app, 'POST', '/admin/license-keys/bulk/revoke', { token: admin, body: { keys: Array.from({ length: 200 }, (_, i) => `k${i}`) } });
  t.equal(max.status, 200, '200 keys are accepted');
  t.equal(max.body.data.not_found, 200);

  const res = await call(app, 'POST', '/admin/license-keys/bulk/revoke', {
    token: admin,
    body: { keys: [keys[0]!.key, keys[1]!.key, keys[2]!.id, 'nope', keys[1]!.key] },
  });
  t.equal(res.status, 200);
  t.same(
    res.body.data.results,
    [
      { key: keys[0]!.key, id: keys[0]!.id, status: 'already_revoked' },
      { key: keys[1]!.key, id: keys[1]!.id, status: 'revoked' },
      { key: keys[2]!.id, id: keys[2]!.id, status: 'revoked' },
      { key: 'nope', id: null, status: 'not_found' },
    ],
    'per-row results; the repeated key is done once',
  );
  t.match(res.body.data, { revoked: 2, already_revoked: 1, not_found: 1 });
  const audit = await sql<{ resource_id: string; metadata: { bulk_request_id?: string } }[]>`
    select resource_id, metadata from audit_events where action = 'super_admin.license_key_revoked' order by id`;
  t.same(
    audit.map((a) => a.resource_id),
    [keys[0]!.id, keys[1]!.id, keys[2]!.id],
    'the already revoked key gained no new audit row',
  );
  t.notOk(audit[0]!.metadata.bulk_request_id, 'the single revocation carries no bulk id');
  t.equal(audit[1]!.metadata.bulk_request_id, res.body.data.bulk_request_id);
  t.equal(audit[2]!.metadata.bulk_request_id, res.body.data.bulk_request_id);
  for (const k of keys) t.equal((await validate(app, k.key)).reason, 'revoked');
});

t.test('bad input: the right slug and nothing written', async (t) => {
  const { app, sql } = await buildTestApp(t);
  const admin = await superAdminToken(app);
  const issued = (await call(app, 'POST', '/admin/license-keys', { token: admin, body: { plan_id: 'pro' } })).body.data;
  const state = async () =>
    (await sql`select count(*)::int as n, count(revoked_at)::int as revoked, (select count(*)::int from audit_events) as audit from license_keys`)[0];
  const before = await state();
  const cases: [label: string, url: string, options: Parameters<typeof call>[3], status: number, slug: string][] = [
    ['truncated JSON', '/admin/license-keys', { raw: '{"plan_id":"pr' }, 400, 'bad_request'],
    ['bulk: keys a string', '/admin/license-keys/bulk/revoke', { body: { keys: issued.key } }, 422, 'validation_error'],
    ['bulk: a key a number', '/admin/license-keys/bulk/revoke', { body: { keys: [7] } }, 422, 'validation_error'],
    ['bulk: an oversize key', '/admin/license-keys/bulk/revoke', { body: { keys: ['x'.repeat(1001)] } }, 422, 'validation_error'],
    ['bulk: NUL in a key', '/admin/license-keys/bulk/revoke', { body: { keys: [`${issued.id}\u0000`] } }, 422, 'validation_error'],
    ['bulk: unknown field', '/admin/license-keys/bulk/revoke', { body: { keys: [issued.id], force: true } }, 400, 'bad_request'],
    ['revoke: oversize key', `/admin/license-keys/${'x'.repeat(1001)}/revoke`, {}, 422, 'validation_error'],
    ['revoke: NUL in key', `/admin/license-keys/${issued.id}%00/revoke`, {}, 422, 'validation_error'],
    ['revoke: a body', `/admin/license-keys/${issued.id}/revoke`, { body: { now: true } }, 400, 'bad_request'],
    ['validate: key a number', '/license/validate', { body: { key: 7 } }, 422, 'validation_error'],
    ['validate: no key', '/license/validate', { body: {} }, 422, 'validation_error'],
  ];
  for (const [label, url, options, status, slug] of cases) {
    const res = await call(app, 'POST', url, { token: admin, ...options });
    t.equal(res.status, status, `${label}: ${status}`);
    t.equal(res.body.error, slug, `${label}: ${slug}`);
  }
  t.same(await state(), before, 'nothing written');
});
