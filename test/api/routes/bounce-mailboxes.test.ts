// /bounce-mailboxes: create (password sealed, never returned), list, read, change, delete, verify with a real POP3 login against dovecot; refusals, the
// address policy, scopes and isolation.
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { startDovecot } from '../../helpers/dovecot.js';
import { assertForeign404 } from '../../helpers/isolation.js';
import { loggingIn, ROGUE_GREETINGS, startRoguePop3 } from '../../helpers/rogue-pop3.js';

const PASSWORD = 'pop-secret-1';

async function setup(t: Parameters<typeof buildTestApp>[0], allowPrivate = true, env: Record<string, string> = {}) {
  const s = await buildTestApp(t, { env: { MAILPATH_CONFIG__BOUNCE_MAILBOXES__ALLOW_PRIVATE_ADDRESSES: String(allowPrivate), ...env } });
  const pop = await startDovecot(t, { 'bounces@isp.test': PASSWORD });
  const owner = await registerTenant(s.app);
  const body = (over: Record<string, unknown> = {}) => ({
    name: 'ISP bounces',
    host: '127.0.0.1',
    port: pop.port,
    username: 'bounces@isp.test',
    password: PASSWORD,
    use_tls_implicit: false,
    ...over,
  });
  return { ...s, pop, owner, body };
}

t.test('create, list, read, change, delete; the password is sealed at rest and never returned', async (t) => {
  const { app, sql, owner, body } = await setup(t);
  const created = await call(app, 'POST', '/bounce-mailboxes', { token: owner.token, body: body() });
  t.equal(created.status, 200);
  t.match(created.body.data, {
    id: String,
    name: 'ISP bounces',
    host: '127.0.0.1',
    username: 'bounces@isp.test',
    enabled: true,
    delete_after_read: false,
    poll_interval_s: 300,
    use_tls_implicit: false,
    last_polled_at: null,
    last_poll_error: null,
    messages_fetched: 0,
  });
  const id = created.body.data.id;
  t.notOk(JSON.stringify(created.body).includes(PASSWORD), 'the password is not in the answer');
  t.notOk('password' in created.body.data);
  const [row] = await sql<{ password_sealed: Buffer }[]>`select password_sealed from bounce_mailboxes where id = ${id}`;
  t.notOk(row!.password_sealed.includes(Buffer.from(PASSWORD)), 'nor stored in clear');

  const list = await call(app, 'GET', '/bounce-mailboxes', { token: owner.token });
  t.equal(list.status, 200);
  t.same(
    list.body.data.items.map((m: { id: string }) => m.id),
    [id],
    '{ items }',
  );
  t.notOk(JSON.stringify(list.body).includes(PASSWORD));
  t.equal((await call(app, 'GET', `/bounce-mailboxes/${id}`, { token: owner.token })).body.data.id, id);

  const changed = await call(app, 'PATCH', `/bounce-mailboxes/${id}`, {
    token: owner.token,
    body: { enabled: false, poll_interval_s: 600, password: 'new-pass-2' },
  });
  t.equal(changed.status, 200);
  t.match(changed.body.data, { enabled: false, poll_interval_s: 600, name: 'ISP bounces' }, 'only the fields given change');
  const [after] = await sql<{ password_sealed: Buffer }[]>`select password_sealed from bounce_mailboxes where id = ${id}`;
  t.notSame(after!.password_sealed, row!.password_sealed, 'a new password is sealed again');

  const audit = await sql<{ action: string }[]>`select action from audit_events where resource_id = ${id} order by created_at`;
  t.same(
    audit.map((a) => a.action),
    ['bounce_mailbox.created', 'bounce_mailbox.updated'],
    'audited',
  );

  const deleted = await call(app, 'DELETE', `/bounce-mailboxes/${id}`, { token: owner.token });
  t.same([deleted.status, deleted.body.data], [200, { status: 'deleted' }]);
  t.equal((await call(app, 'GET', `/bounce-mailboxes/${id}`, { token: owner.token })).status, 404);
  t.equal((await call(app, 'DELETE', `/bounce-mailboxes/${id}`, { token: owner.token })).status, 404, 'gone');
});

t.test('refusals name the field', async (t) => {
  const { app, owner, body } = await setup(t);
  const post = (b: unknown) => call(app, 'POST', '/bounce-mailboxes', { token: owner.token, body: b });
  for (const field of ['name', 'host', 'port', 'username', 'password']) {
    const rest: Record<string, unknown> = body();
    delete rest[field];
    const res = await post(rest);
    t.equal(res.status, 422, `${field} missing: 422`);
    t.equal(res.body.error, 'validation_error');
    t.match(JSON.stringify(res.body), field, `names ${field}`);
  }
  const cases: [Record<string, unknown>, string][] = [
    [{ port: 0 }, 'port'],
    [{ port: 70000 }, 'port'],
    [{ host: 'not a host' }, 'host'],
    [{ host: '-bad-.example' }, 'host'],
    [{ name: '   ' }, 'name'],
    [{ username: 'a\r\nDELE 1' }, 'username'],
    [{ password: '' }, 'password'],
    [{ password: 'x\r\nQUIT' }, 'password'],
    [{ poll_interval_s: 59 }, 'poll_interval_s'],
    [{ poll_interval_s: 86_401 }, 'poll_interval_s'],
  ];
  for (const [over, field] of cases) {
    const res = await post(body(over));
    t.equal(res.status, 422, `${JSON.stringify(over)}: 422`);
    t.equal(res.body.error, 'validation_error');
    t.match(JSON.stringify(res.body), field, `names ${field}`);
  }
  t.equal((await post({ ...body(), extra: 1 })).status, 400, 'an unknown field is 400');
  const patched = await call(app, 'PATCH', `/bounce-mailboxes/00000000-0000-4000-8000-000000000000`, { token: owner.token, body: { enabled: true } });
  t.equal(patched.status, 404);
  t.equal((await call(app, 'GET', '/bounce-mailboxes/not-a-uuid', { token: owner.token })).status, 404, 'a malformed id is 404');

  for (let i = 0; i < 20; i++) t.equal((await post(body({ name: `box ${i}` }))).status, 200);
  const over = await post(body({ name: 'one too many' }));
  t.equal(over.status, 422, 'at most 20 per tenant');
  t.match(over.body.message, /at most 20/);
});

t.test('verify: a real connect and login, {ok, error} saying why not', async (t) => {
  const { app, owner, body, pop } = await setup(t);
  const create = async (over: Record<string, unknown>) =>
    (await call(app, 'POST', '/bounce-mailboxes', { token: owner.token, body: body(over) })).body.data.id as string;
  const verify = async (id: string) => (await call(app, 'POST', `/bounce-mailboxes/${id}/verify`, { token: owner.token })).body.data;

  t.same(await verify(await create({})), { ok: true, error: null }, 'the right password logs in');
  t.match(await verify(await create({ password: 'wrong' })), { ok: false, error: /^login: .*(fail|denied|invalid)/i }, 'a wrong one says the server refused');
  t.match(await verify(await create({ port: 1 })), { ok: false, error: /ECONNREFUSED/ }, 'a closed port');
  t.match(
    await verify(await create({ port: pop.tlsPort, use_tls_implicit: true })),
    { ok: false, error: /certificate/i },
    'implicit TLS is used and the certificate checked (a self-signed one is refused)',
  );
  t.match(await verify(await create({ host: 'no-such-host.invalid' })), { ok: false, error: /could not be resolved|does not resolve/ });
  t.equal(pop.count('bounces@isp.test'), 0, 'nothing was fetched or deleted');
});

t.test('verify against misbehaving servers: {ok: false, error} saying what went wrong, and the process lives and answers', async (t) => {
  // A short timeout_ms keeps the dripping server cheap; the client gives up at it, not at some idle gap.
  const { app, owner, body } = await setup(t, true, { MAILPATH_CONFIG__BOUNCE_MAILBOXES__TIMEOUT_MS: '2000' });
  const create = async (over: Record<string, unknown>) =>
    (await call(app, 'POST', '/bounce-mailboxes', { token: owner.token, body: body(over) })).body.data.id as string;
  const rogues = [
    ...ROGUE_GREETINGS,
    {
      name: 'a refused password',
      script: loggingIn((line, s) => line.startsWith('PASS') && (s.write('-ERR [AUTH] no\r\n'), true)),
      error: /^login: the server refused: \[AUTH\] no$/,
    },
  ];
  for (const rogue of rogues) {
    const server = await startRoguePop3(t, rogue.script);
    const id = await create({ port: server.port, use_tls_implicit: rogue.tls ?? false });
    const res = await call(app, 'POST', `/bounce-mailboxes/${id}/verify`, { token: owner.token });
    t.equal(res.status, 200, `${rogue.name}: 200`);
    t.match(res.body.data, { ok: false, error: rogue.error }, `${rogue.name}: ${res.body.data?.error}`);
    t.equal(server.connections(), 1, `${rogue.name}: the server was reached`);
    if ('floodBytes' in rogue)
      t.ok(server.bytesWritten() < rogue.floodBytes!, `${rogue.name}: the client hung up long before the end (${server.bytesWritten()} bytes were taken)`);
    t.equal((await call(app, 'GET', '/whoami', { token: owner.token })).status, 200, `${rogue.name}: the process still answers`);
  }
  t.same(
    (await call(app, 'POST', `/bounce-mailboxes/${await create({})}/verify`, { token: owner.token })).body.data,
    { ok: true, error: null },
    'and a good server still verifies',
  );
});

t.test('the address policy: without allow_private_addresses a loopback host is refused at verify and poll', async (t) => {
  const { app, owner, body } = await setup(t, false);
  const created = await call(app, 'POST', '/bounce-mailboxes', { token: owner.token, body: body() });
  t.equal(created.status, 200, 'stored (the host may be fixed later)');
  const res = await call(app, 'POST', `/bounce-mailboxes/${created.body.data.id}/verify`, { token: owner.token });
  t.match(res.body.data, { ok: false, error: /loopback address 127\.0\.0\.1, which bounce mailboxes may not reach/ });
});

t.test('scopes: domains:read reads, domains:write changes; other scopes are refused', async (t) => {
  const { app, owner, body } = await setup(t);
  const id = (await call(app, 'POST', '/bounce-mailboxes', { token: owner.token, body: body() })).body.data.id;
  const reader = (await createKey(app, owner, { scopes: ['domains:read'] })).key;
  const writer = (await createKey(app, owner, { scopes: ['domains:write'] })).key;
  const other = (await createKey(app, owner, { scopes: ['contacts:read'] })).key;
  t.equal((await call(app, 'GET', '/bounce-mailboxes', { token: reader })).status, 200);
  t.equal((await call(app, 'GET', `/bounce-mailboxes/${id}`, { token: reader })).status, 200);
  for (const [method, url, b] of [
    ['POST', '/bounce-mailboxes', body()],
    ['PATCH', `/bounce-mailboxes/${id}`, { enabled: false }],
    ['POST', `/bounce-mailboxes/${id}/verify`, undefined],
    ['DELETE', `/bounce-mailboxes/${id}`, undefined],
  ] as const) {
    const res = await call(app, method, url, { token: reader, ...(b ? { body: b } : {}) });
    t.equal(res.status, 403, `${method} ${url} with domains:read: 403`);
    t.equal(res.body.error, 'invalid_scope');
  }
  t.equal((await call(app, 'GET', '/bounce-mailboxes', { token: other })).status, 403, 'contacts:read cannot list');
  t.equal((await call(app, 'PATCH', `/bounce-mailboxes/${id}`, { token: writer, body: { enabled: false } })).status, 200, 'domains:write changes');
});

t.test("another tenant's mailbox is 404 on every route, and absent from its list", async (t) => {
  const { app, owner, body } = await setup(t);
  const id = (await call(app, 'POST', '/bounce-mailboxes', { token: owner.token, body: body() })).body.data.id;
  const other = await registerTenant(app);
  await assertForeign404(t, app, other.token, [
    { method: 'GET', url: `/bounce-mailboxes/${id}` },
    { method: 'PATCH', url: `/bounce-mailboxes/${id}`, body: { enabled: false } },
    { method: 'POST', url: `/bounce-mailboxes/${id}/verify` },
    { method: 'DELETE', url: `/bounce-mailboxes/${id}` },
  ]);
  t.same((await call(app, 'GET', '/bounce-mailboxes', { token: other.token })).body.data.items, []);
  t.equal((await call(app, 'GET', `/bounce-mailboxes/${id}`, { token: owner.token })).body.data.enabled, true, 'untouched');
});
