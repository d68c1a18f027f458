// Templates through the API: CRUD with audit, names, Liquid checked at save, rendering, limits, scopes, paging and tenant isolation.
import t from 'tap';
import { buildTestApp, call, countRows, createKey, registerTenant, type TestApp, type TestTenant } from '../../helpers/app.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';

const WELCOME = {
  name: 'Welcome',
  subject: 'Welcome, {{ contact.first_name | default: "friend" }}!',
  body_html: '<p>Hi {{ contact.first_name | default: "there" }}, your plan: {% if custom_fields.plan == "pro" %}Pro{% else %}Free{% endif %}</p>',
  body_text: 'Hi {{ contact.first_name | default: "there" }} <{{ contact.email }}>',
};

async function addTemplate(s: TestApp, token: string, body: Record<string, unknown> = WELCOME) {
  const res = await call(s.app, 'POST', '/templates', { token, body });
  if (res.status !== 201) throw new Error(`create template: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

async function audits(s: TestApp, id: string) {
  return s.sql<{ action: string; metadata: Record<string, unknown> }[]>`
    select action, metadata from audit_events where resource_type = 'template' and resource_id = ${id} order by id`;
}

t.test('create, read, update only the fields given, delete; every change audited', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const created = await call(s.app, 'POST', '/templates', { token: owner.token, body: { ...WELCOME, name: '  Welcome  ' } });
  t.equal(created.status, 201);
  const tpl = created.body.data;
  t.match(tpl, { name: 'Welcome', subject: WELCOME.subject, body_html: WELCOME.body_html, body_text: WELCOME.body_text, created_at: String });
  t.equal(tpl.updated_at, tpl.created_at);
  t.same((await call(s.app, 'GET', `/templates/${tpl.id}`, { token: owner.token })).body.data, tpl, 'read back as created');

  let res = await call(s.app, 'PATCH', `/templates/${tpl.id}`, { token: owner.token, body: { subject: 'New {{ x }}' } });
  t.equal(res.status, 200);
  t.match(res.body.data, { name: 'Welcome', subject: 'New {{ x }}', body_html: WELCOME.body_html, body_text: WELCOME.body_text });
  t.ok(res.body.data.updated_at >= tpl.updated_at);
  res = await call(s.app, 'PATCH', `/templates/${tpl.id}`, { token: owner.token, body: { body_html: null } });
  t.equal(res.body.data.body_html, null, 'null removes a body');
  t.equal(res.body.data.body_text, WELCOME.body_text);
  res = await call(s.app, 'PATCH', `/templates/${tpl.id}`, { token: owner.token, body: { body_text: '' } });
  t.equal(res.status, 422, 'removing the last body');
  t.match(res.body, { error: 'validation_error', message: /^body_html: a template needs body_html, body_text or both/ });
  res = await call(s.app, 'PATCH', `/templates/${tpl.id}`, { token: owner.token, body: {} });
  t.equal(res.status, 200, 'an empty PATCH changes nothing');
  t.equal(res.body.data.subject, 'New {{ x }}');
  t.equal((await call(s.app, 'PATCH', `/templates/${tpl.id}`, { token: owner.token, body: { colour: 'red' } })).status, 400, 'unknown field');

  const del = await call(s.app, 'DELETE', `/templates/${tpl.id}`, { token: owner.token });
  t.equal(del.status, 200);
  t.same(del.body.data, { deleted: true, id: tpl.id });
  t.equal((await call(s.app, 'GET', `/templates/${tpl.id}`, { token: owner.token })).status, 404);
  t.equal((await call(s.app, 'DELETE', `/templates/${tpl.id}`, { token: owner.token })).status, 404, 'deleting twice');
  t.same(
    (await audits(s, tpl.id)).map((a) => [a.action, a.metadata]),
    [
      ['template.created', { name: 'Welcome' }],
      ['template.updated', { name: 'Welcome', fields: ['subject'] }],
      ['template.updated', { name: 'Welcome', fields: ['body_html'] }],
      ['template.deleted', { name: 'Welcome' }],
    ],
    'one audit row per change, none for refused or empty updates',
  );
});

t.test('names are unique per tenant without case', async (t) => {
  const s = await buildTestApp(t);
  const { owner, other } = await twoTenants(s.app);
  const first = await addTemplate(s, owner.token);
  for (const name of ['Welcome', 'WELCOME', ' welcome ']) {
    const res = await call(s.app, 'POST', '/templates', { token: owner.token, body: { ...WELCOME, name } });
    t.equal(res.status, 409, `${JSON.stringify(name)} → 409`);
    t.equal(res.body.error, 'conflict');
  }
  const second = await addTemplate(s, owner.token, { ...WELCOME, name: 'Receipt' });
  const rename = await call(s.app, 'PATCH', `/templates/${second.id}`, { token: owner.token, body: { name: 'welcome' } });
  t.equal(rename.status, 409, 'renaming onto another template');
  t.equal((await call(s.app, 'PATCH', `/templates/${first.id}`, { token: owner.token, body: { name: 'WELCOME' } })).status, 200, 'recasing its own name');
  t.equal((await call(s.app, 'POST', '/templates', { token: other.token, body: WELCOME })).status, 201, 'another tenant may use the name');
  await call(s.app, 'DELETE', `/templates/${first.id}`, { token: owner.token });
  t.equal((await call(s.app, 'POST', '/templates', { token: owner.token, body: WELCOME })).status, 201, 'free again once deleted');
  t.equal((await call(s.app, 'POST', '/templates', { token: owner.token, body: { ...WELCOME, name: '   ' } })).status, 422, 'blank name');
});

t.test('Liquid is checked when saved: 422 naming the part, line and column; nothing stored', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { body_html: '<p>\n  {% if contact.email %}unclosed</p>' },
      /^body_html: Liquid syntax error at line 2, column 3: tag \{% if contact.email %\} not closed/,
    ],
    [{ subject: 'Hi {{ contact.first_name | shout }}' }, /^subject: Liquid syntax error at line 1, column 4: undefined filter: shout/],
    [{ body_text: 'a\nb\n{% nope %}' }, /^body_text: Liquid syntax error at line 3, column 1: tag "nope" not found/],
    [{ body_html: "{% include '/etc/passwd' %}" }, /^body_html: Liquid syntax error at line 1, column 1: the include tag is not supported/],
    [{ body_text: "x {% render '/etc/passwd' %}" }, /^body_text: Liquid syntax error at line 1, column 3: the render tag is not supported/],
    [{ body_html: "{% layout '/etc/passwd' %}" }, /^body_html: Liquid syntax error at line 1, column 1: the layout tag is not supported/],
    [{ subject: ' ' }, /^subject: must not be blank/],
    [{ body_html: null, body_text: null }, /^body_html: a template needs body_html, body_text or both/],
    [{ body_html: '', body_text: undefined }, /^body_html: a template needs body_html, body_text or both/],
    [{ body_html: 'a'.repeat(512 * 1024 + 1) }, /^body_html: must be at most 512 KiB/],
    [{ body_text: 'é'.repeat(256 * 1024 + 1) }, /^body_text: must be at most 512 KiB/],
  ];
  for (const [change, message] of cases) {
    const res = await call(s.app, 'POST', '/templates', { token: owner.token, body: { ...WELCOME, ...change } });
    t.equal(res.status, 422, `${message}`);
    t.match(res.body, { error: 'validation_error', message });
    t.notMatch(JSON.stringify(res.body), /root:/, 'no file content in the answer');
  }
  t.equal(await countRows(s.sql, 'templates'), 0, 'nothing was stored');

  const largest = await addTemplate(s, owner.token, { ...WELCOME, name: 'Largest', body_html: 'a'.repeat(512 * 1024) });
  t.equal(largest.body_html.length, 512 * 1024, 'exactly 512 KiB is accepted');
  const tpl = await addTemplate(s, owner.token);
  // Removing only the HTML body is a valid PATCH (the text body remains).
  for (const [change, message] of cases.filter(([c]) => c['body_text'] !== undefined || c['body_html'] !== '')) {
    const res = await call(s.app, 'PATCH', `/templates/${tpl.id}`, { token: owner.token, body: change });
    t.equal(res.status, 422, `PATCH ${message}`);
  }
  t.same((await call(s.app, 'GET', `/templates/${tpl.id}`, { token: owner.token })).body.data, tpl, 'refused updates changed nothing');
});

t.test('rendering: default, if on a literal, contact and custom fields, escaping per part, one-line subject', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const tpl = await addTemplate(s, owner.token);
  const contact = { email: 'ada@example.test', first_name: 'Ada', custom_fields: { plan: 'pro' } };
  let res = await call(s.app, 'POST', `/templates/${tpl.id}/render`, { token: owner.token, body: { contact } });
  t.equal(res.status, 200);
  t.same(res.body.data, { subject: 'Welcome, Ada!', html: '<p>Hi Ada, your plan: Pro</p>', text: 'Hi Ada <ada@example.test>' });
  res = await call(s.app, 'POST', `/templates/${tpl.id}/render`, { token: owner.token, body: {} });
  t.same(res.body.data, { subject: 'Welcome, friend!', html: '<p>Hi there, your plan: Free</p>', text: 'Hi there <>' }, 'defaults without a contact');

  const escaping = await addTemplate(s, owner.token, {
    name: 'Escaping',
    subject: '{{ subject_line }}',
    body_html: '<p>{{ note }}</p><div>{{ trusted | raw }}</div>',
    body_text: '{{ note }}',
  });
  const variables = { note: '<script>alert("x")</script> & co', trusted: '<b>ok</b>', subject_line: 'Order 7\r\nBcc: victim@example.test\nX: y' };
  res = await call(s.app, 'POST', `/templates/${escaping.id}/render`, { token: owner.token, body: { variables } });
  t.equal(res.body.data.html, '<p>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; co</p><div><b>ok</b></div>', 'escaped in HTML unless raw');
  t.equal(res.body.data.text, variables.note, 'not escaped in text');
  t.equal(res.body.data.subject, 'Order 7 Bcc: victim@example.test X: y', 'CR/LF stripped from the subject');

  const textOnly = await addTemplate(s, owner.token, {
    name: 'Text only',
    subject: 's',
    body_text: '{{ custom_fields.plan }}/{{ contact.custom_fields.plan }}',
  });
  res = await call(s.app, 'POST', `/templates/${textOnly.id}/render`, { token: owner.token, body: { contact } });
  t.same(res.body.data, { subject: 's', html: null, text: 'pro/pro' });

  const hostile = await addTemplate(s, owner.token, { name: 'Loop', subject: 's', body_text: 'x\n{% for i in (1..100000000) %}x{% endfor %}' });
  res = await call(s.app, 'POST', `/templates/${hostile.id}/render`, { token: owner.token, body: {} });
  t.equal(res.status, 422, 'a render past its limit');
  t.match(res.body.message, /^body_text: could not render at line 2, column 1: memory alloc limit exceeded/);

  t.equal((await call(s.app, 'POST', `/templates/${tpl.id}/render`, { token: owner.token, body: { contact: { email: 'not an email' } } })).status, 422);
  t.equal((await call(s.app, 'POST', `/templates/${tpl.id}/render`, { token: owner.token, body: { vars: {} } })).status, 400, 'unknown field');
});

t.test('list: newest first without bodies, name search, cursor pages; a forged cursor is 400', async (t) => {
  const s = await buildTestApp(t);
  const { owner, other } = await twoTenants(s.app);
  for (const name of ['Welcome A', 'Receipt', 'welcome b', '100% off']) await addTemplate(s, owner.token, { ...WELCOME, name });
  await addTemplate(s, other.token, { ...WELCOME, name: 'Welcome other' });

  const first = await call(s.app, 'GET', '/templates?limit=3', { token: owner.token });
  t.equal(first.status, 200);
  t.equal(first.body.total, 4);
  t.same(
    first.body.data.map((d: { name: string }) => d.name),
    ['100% off', 'welcome b', 'Receipt'],
  );
  t.match(first.body.data[0], { subject: WELCOME.subject, has_body_html: true, has_body_text: true });
  t.notOk('body_html' in first.body.data[0], 'bodies are left out of lists');
  const second = await call(s.app, 'GET', `/templates?limit=3&after=${first.body.next_cursor}`, { token: owner.token });
  t.same(
    second.body.data.map((d: { name: string }) => d.name),
    ['Welcome A'],
  );
  t.equal(second.body.next_cursor, null);

  const search = async (q: string) => (await call(s.app, 'GET', `/templates?q=${encodeURIComponent(q)}`, { token: owner.token })).body;
  t.same(
    (await search('WELCOME')).data.map((d: { name: string }) => d.name),
    ['welcome b', 'Welcome A'],
    'case-insensitive, own tenant only',
  );
  t.equal((await search('WELCOME')).total, 2, 'total counts the matches');
  t.same(
    (await search('%')).data.map((d: { name: string }) => d.name),
    ['100% off'],
    '% is a character, not a wildcard',
  );
  t.equal((await search('  ')).total, 4, 'blank = all');

  for (const bad of ['nonsense', Buffer.from('2026-01-01T00:00:00.000Z|not-a-uuid').toString('base64url')]) {
    const res = await call(s.app, 'GET', `/templates?after=${bad}`, { token: owner.token });
    t.equal(res.status, 400, `cursor ${bad}`);
    t.equal(res.body.error, 'bad_request');
  }
  t.equal((await call(s.app, 'GET', '/templates?limit=0', { token: owner.token })).status, 422);
});

t.test('scopes: templates:read reads and renders, templates:write changes', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const tpl = await addTemplate(s, owner.token);
  const reader = await createKey(s.app, owner, { scopes: ['templates:read'] });
  const writer = await createKey(s.app, owner, { scopes: ['templates:write'] });
  t.equal((await call(s.app, 'GET', '/templates', { token: reader.key })).status, 200);
  t.equal((await call(s.app, 'GET', `/templates/${tpl.id}`, { token: reader.key })).status, 200);
  t.equal((await call(s.app, 'POST', `/templates/${tpl.id}/render`, { token: reader.key, body: {} })).status, 200);
  const writes = [
    { method: 'POST' as const, url: '/templates', body: { ...WELCOME, name: 'By reader' } },
    { method: 'PATCH' as const, url: `/templates/${tpl.id}`, body: { subject: 'x' } },
    { method: 'DELETE' as const, url: `/templates/${tpl.id}` },
  ];
  for (const w of writes) {
    const res = await call(s.app, w.method, w.url, { token: reader.key, ...(w.body ? { body: w.body } : {}) });
    t.equal(res.status, 403, `${w.method} ${w.url} needs templates:write`);
    t.equal(res.body.error, 'invalid_scope');
  }
  t.equal((await call(s.app, 'GET', '/templates', { token: writer.key })).status, 403, 'write does not imply read');
  t.equal((await call(s.app, 'POST', `/templates/${tpl.id}/render`, { token: writer.key, body: {} })).status, 403);
  t.equal((await call(s.app, 'POST', '/templates', { token: writer.key, body: { ...WELCOME, name: 'By writer' } })).status, 201);
  t.equal((await call(s.app, 'PATCH', `/templates/${tpl.id}`, { token: writer.key, body: { subject: 'x' } })).status, 200);
  t.equal((await call(s.app, 'GET', '/templates')).status, 401);
});

t.test("another tenant's template is 404 to a session and to an API key", async (t) => {
  const s = await buildTestApp(t);
  const { owner, other }: { owner: TestTenant; other: TestTenant } = await twoTenants(s.app);
  const tpl = await addTemplate(s, owner.token);
  const otherKey = await createKey(s.app, other);
  const requests = [
    { method: 'GET' as const, url: `/templates/${tpl.id}` },
    { method: 'PATCH' as const, url: `/templates/${tpl.id}`, body: { subject: 'hijacked' } },
    { method: 'POST' as const, url: `/templates/${tpl.id}/render`, body: {} },
    { method: 'DELETE' as const, url: `/templates/${tpl.id}` },
    { method: 'GET' as const, url: '/templates/not-a-uuid' },
    { method: 'PATCH' as const, url: '/templates/not-a-uuid', body: { subject: 'x' } },
    { method: 'POST' as const, url: '/templates/not-a-uuid/render', body: {} },
    { method: 'DELETE' as const, url: '/templates/00000000-0000-4000-8000-000000000000' },
  ];
  await assertForeign404(t, s.app, other.token, requests);
  await assertForeign404(t, s.app, otherKey.key, requests);
  t.same((await call(s.app, 'GET', `/templates/${tpl.id}`, { token: owner.token })).body.data, tpl, 'unchanged for its owner');
  t.equal((await call(s.app, 'GET', '/templates', { token: other.token })).body.total, 0, "not in the other tenant's list");
});
