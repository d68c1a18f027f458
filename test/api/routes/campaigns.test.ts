// Campaigns through the API: create with its defaults and every refusal, search and pages, PATCH and the target switch, delete, duplicate, the MD5 list,
// scopes and tenant isolation (status changes: test/scenarios/api/campaign-lifecycle.test.ts).
import t from 'tap';
import { call, createKey, registerTenant } from '../../helpers/app.js';
import { addresses, campaignApp, createCampaign, listOf, sender } from '../../helpers/campaigns.js';
import { assertForeign404 } from '../../helpers/isolation.js';

const s = await campaignApp(t);
const { sql } = s;
const a = await sender(s);
const token = a.tenant.token;
const { listId } = await listOf(sql, a.tenant.tenantId, addresses('api', 3));
const other = await registerTenant(s.app);
const foreignList = (await listOf(sql, other.tenantId, ['o@example.test'])).listId;

t.test('create: a draft with its defaults and zero progress, answered 200; audited', async (t) => {
  const res = await call(s.app, 'POST', '/campaigns', {
    token,
    body: { name: '  Spring sale ', list_id: listId, subject: 'Hi {{ first_name }}', body_html: '<p>x</p>', from_email: ` ${a.from.toUpperCase()}` },
  });
  t.equal(res.status, 200);
  const c = res.body.data;
  t.match(c, {
    id: String,
    name: 'Spring sale',
    status: 'draft',
    subject: 'Hi {{ first_name }}',
    list_id: listId,
    segment_id: null,
    from_email: a.from,
    track_opens: true,
    track_clicks: true,
    ab_metric: 'open',
    ab_split_pct: null,
    send_time_optimization: false,
    utm_tagging: false,
    waiting_reason: null,
    md5_list_id: null,
  });
  t.same(c.progress, {
    targeted: 0,
    skipped: { unsubscribed: 0, deleted: 0, suppressed: 0, md5_listed: 0, invalid: 0, cancelled: 0 },
    skipped_total: 0,
    queued: 0,
    remaining: 0,
    sent: 0,
    delivered: 0,
    deferred: 0,
    failed: 0,
    targeting_complete: false,
  });
  t.same((await call(s.app, 'GET', `/campaigns/${c.id}`, { token })).body.data, c, 'read back as created');
  const [audit] = await sql<{ action: string }[]>`select action from audit_events where resource_type = 'campaign' and resource_id = ${c.id}`;
  t.equal(audit!.action, 'campaign.created');
  const toggles = await createCampaign(s, token, {
    list_id: listId,
    send_time_optimization: true,
    track_opens: false,
    utm_tagging: true,
    utm_source: 'news',
    ab_split_pct: 20,
    subject_b: 'B',
  });
  t.match(toggles, { send_time_optimization: true, track_opens: false, utm_tagging: true, utm_source: 'news', ab_split_pct: 20, subject_b: 'B' });
});

t.test('create refusals: 422 naming the field, 400 for unknown fields; nothing stored', async (t) => {
  const [before] = await sql<{ n: number }[]>`select count(*)::int as n from campaigns`;
  const cases: [Record<string, unknown>, number, string | RegExp][] = [
    [{ list_id: listId }, 422, /^name: is required/],
    [{ name: '   ', list_id: listId }, 422, /^name: must not be blank/],
    [{ name: 'a\nb', list_id: listId }, 422, /^name: /],
    [{ name: 'N' }, 422, /^list_id: give exactly one of list_id or segment_id/],
    [{ name: 'N', list_id: listId, segment_id: listId }, 422, /^list_id: give exactly one/],
    [{ name: 'N', list_id: foreignList }, 422, /^list_id: no such list/],
    [{ name: 'N', list_id: 'not-a-uuid' }, 422, /^list_id: no such list/],
    [{ name: 'N', segment_id: listId }, 422, /^segment_id: no such segment/],
    [{ name: 'N', list_id: listId, template_id: listId }, 422, /^template_id: no such template/],
    [{ name: 'N', list_id: listId, subject: '{% if %}' }, 422, /^subject: Liquid syntax error/],
    [{ name: 'N', list_id: listId, subject: 'two\nlines' }, 422, /^subject: must be one line/],
    [{ name: 'N', list_id: listId, subject_b: '{{ x | nofilter }}' }, 422, /^subject_b: /],
    [{ name: 'N', list_id: listId, body_html: '{% for %}' }, 422, /^body_html: Liquid syntax error/],
    [{ name: 'N', list_id: listId, preheader_text: '{% if x %}' }, 422, /^preheader_text: /],
    [{ name: 'N', list_id: listId, from_email: 'not an address' }, 422, /^from_email: /],
    [{ name: 'N', list_id: listId, reply_to: 'x@' }, 422, /^reply_to: /],
    [{ name: 'N', list_id: listId, ab_split_pct: 0 }, 422, /^ab_split_pct: /],
    [{ name: 'N', list_id: listId, ab_split_pct: 101 }, 422, /^ab_split_pct: /],
    [{ name: 'N', list_id: listId, utm_source: 'x'.repeat(201) }, 422, /^utm_source: /],
    [{ name: 'N', list_id: listId, status: 'sent' }, 400, 'bad_request'],
    [{ name: 'N', list_id: listId, md5_list_id: null }, 400, 'bad_request'],
  ];
  for (const [body, status, expected] of cases) {
    const res = await call(s.app, 'POST', '/campaigns', { token, body });
    t.equal(res.status, status, JSON.stringify(body));
    if (typeof expected === 'string') t.equal(res.body.error, expected);
    else t.match(res.body.message, expected, `${JSON.stringify(body)}: ${res.body.message}`);
  }
  const [after] = await sql<{ n: number }[]>`select count(*)::int as n from campaigns`;
  t.equal(after!.n, before!.n);
});

t.test('list: q over name or subject without case (blank: all), newest first, limit and offset, total', async (t) => {
  const tenant = await sender(s);
  const list = (await listOf(sql, tenant.tenant.tenantId, ['q@example.test'])).listId;
  for (const [name, subject] of [
    ['Alpha news', 'Weekly'],
    ['Beta', 'The ALPHA edition'],
    ['Gamma', 'Other'],
  ]) {
    await createCampaign(s, tenant.tenant.token, { name, subject, list_id: list });
  }
  const names = async (query: string) => {
    const res = await call(s.app, 'GET', `/campaigns${query}`, { token: tenant.tenant.token });
    t.equal(res.status, 200);
    return { names: res.body.data.items.map((c: { name: string }) => c.name), total: res.body.data.total, first: res.body.data.items[0] };
  };
  t.same((await names('')).names, ['Gamma', 'Beta', 'Alpha news'], 'newest first');
  t.same((await names('?q=alpha')).names, ['Beta', 'Alpha news'], 'name or subject, any case');
  t.same((await names('?q=%20%20')).names.length, 3, 'blank: all');
  t.same((await names('?q=50%25')).names, [], 'LIKE characters are literal');
  const page = await names('?limit=1&offset=1');
  t.same([page.names, page.total], [['Beta'], 3]);
  t.notOk('body_html' in page.first, 'list entries leave the bodies out');
  t.equal(page.first.has_body_text, true);
  t.equal((await call(s.app, 'GET', '/campaigns?limit=201', { token })).status, 422, 'limit at most 200');
});

t.test('PATCH: the fields given; the target switches between list and segment, never both, never none', async (t) => {
  const c = await createCampaign(s, token, { list_id: listId });
  let res = await call(s.app, 'PATCH', `/campaigns/${c.id}`, {
    token,
    body: { name: 'Renamed', subject: 'New {{ first_name }}', preheader_text: 'Pre', utm_campaign: 'spring' },
  });
  t.equal(res.status, 200);
  t.match(res.body.data, { name: 'Renamed', subject: 'New {{ first_name }}', preheader_text: 'Pre', utm_campaign: 'spring', list_id: listId });
  res = await call(s.app, 'PATCH', `/campaigns/${c.id}`, { token, body: { preheader_text: null, body_text: '' } });
  t.match(res.body.data, { preheader_text: null, body_text: null }, 'null and "" clear');
  const seg = await call(s.app, 'POST', '/segments', {
    token,
    body: { name: 'All', definition: { op: 'AND', rules: [{ type: 'field', field: 'email', operator: 'exists' }] } },
  });
  res = await call(s.app, 'PATCH', `/campaigns/${c.id}`, { token, body: { segment_id: seg.body.data.id } });
  t.match(res.body.data, { segment_id: seg.body.data.id, list_id: null }, 'a segment replaces the list');
  res = await call(s.app, 'PATCH', `/campaigns/${c.id}`, { token, body: { list_id: listId } });
  t.match(res.body.data, { segment_id: null, list_id: listId }, 'and the other way round');
  for (const [body, message] of [
    [{ list_id: listId, segment_id: seg.body.data.id }, /^list_id: give list_id or segment_id, not both/],
    [{ list_id: null }, /^list_id: cannot be cleared/],
    [{ segment_id: null }, /^segment_id: cannot be cleared/],
    [{ name: '' }, /^name: must not be blank/],
    [{ list_id: foreignList }, /^list_id: no such list/],
  ] as const) {
    res = await call(s.app, 'PATCH', `/campaigns/${c.id}`, { token, body });
    t.same([res.status, res.body.error], [422, 'validation_error'], JSON.stringify(body));
    t.match(res.body.message, message);
  }
  const audits = await sql<
    { metadata: { fields: string[] } }[]
  >`select metadata from audit_events where action = 'campaign.updated' and resource_id = ${c.id} order by id`;
  t.same(
    audits.map((r) => r.metadata.fields.sort()),
    [
      ['name', 'preheader_text', 'subject', 'utm_campaign'],
      ['body_text', 'preheader_text'],
      ['list_id', 'segment_id'],
      ['list_id', 'segment_id'],
    ],
  );
});

t.test('DELETE a draft; duplicate copies the content into a new draft (201 {id, name, status})', async (t) => {
  const c = await createCampaign(s, token, {
    name: 'Original',
    list_id: listId,
    subject: 'S',
    subject_b: 'SB',
    preheader_text: 'P',
    body_html: '<p>h</p>',
    body_text: 't',
    from_email: a.from,
    ab_split_pct: 10,
  });
  const [md5] = await sql<
    { id: string }[]
  >`insert into md5_lists (tenant_id, name, created_at, updated_at) values (${a.tenant.tenantId}, 'M', now(), now()) returning id`;
  await call(s.app, 'PATCH', `/campaigns/${c.id}/md5-list`, { token, body: { list_id: md5!.id } });
  const dup = await call(s.app, 'POST', `/campaigns/${c.id}/duplicate`, { token });
  t.equal(dup.status, 201);
  t.same(Object.keys(dup.body.data).sort(), ['id', 'name', 'status']);
  t.match(dup.body.data, { name: 'Original (copy)', status: 'draft' });
  t.not(dup.body.data.id, c.id);
  const copy = (await call(s.app, 'GET', `/campaigns/${dup.body.data.id}`, { token })).body.data;
  t.match(copy, {
    subject: 'S',
    subject_b: 'SB',
    preheader_text: 'P',
    body_html: '<p>h</p>',
    body_text: 't',
    list_id: listId,
    from_email: a.from,
    ab_split_pct: 10,
    md5_list_id: md5!.id,
    scheduled_at: null,
  });
  const long = await createCampaign(s, token, { name: 'x'.repeat(200), list_id: listId });
  const longCopy = await call(s.app, 'POST', `/campaigns/${long.id}/duplicate`, { token });
  t.equal(longCopy.body.data.name.length, 200);
  t.match(longCopy.body.data.name, / \(copy\)$/);

  const del = await call(s.app, 'DELETE', `/campaigns/${c.id}`, { token });
  t.same([del.status, del.body.data], [200, { status: 'deleted' }]);
  t.equal((await call(s.app, 'GET', `/campaigns/${c.id}`, { token })).status, 404);
  t.equal((await call(s.app, 'DELETE', `/campaigns/${c.id}`, { token })).status, 404, 'deleting twice');
  t.equal((await call(s.app, 'GET', `/campaigns/${dup.body.data.id}`, { token })).status, 200, 'the copy stays');
});

t.test("md5-list: one of the tenant's MD5 lists or null; another tenant's is 422", async (t) => {
  const c = await createCampaign(s, token, { list_id: listId });
  const [own] = await sql<
    { id: string }[]
  >`insert into md5_lists (tenant_id, name, created_at, updated_at) values (${a.tenant.tenantId}, 'Own', now(), now()) returning id`;
  const [foreign] = await sql<
    { id: string }[]
  >`insert into md5_lists (tenant_id, name, created_at, updated_at) values (${other.tenantId}, 'Theirs', now(), now()) returning id`;
  let res = await call(s.app, 'PATCH', `/campaigns/${c.id}/md5-list`, { token, body: { list_id: own!.id } });
  t.same([res.status, res.body.data.md5_list_id], [200, own!.id]);
  for (const bad of [foreign!.id, 'nope']) {
    res = await call(s.app, 'PATCH', `/campaigns/${c.id}/md5-list`, { token, body: { list_id: bad } });
    t.same([res.status, res.body.error], [422, 'validation_error']);
    t.match(res.body.message, /^list_id: no such MD5 list/);
  }
  res = await call(s.app, 'PATCH', `/campaigns/${c.id}/md5-list`, { token, body: { list_id: null } });
  t.same([res.status, res.body.data.md5_list_id], [200, null]);
  t.equal((await call(s.app, 'PATCH', `/campaigns/${c.id}/md5-list`, { token, body: {} })).status, 422, 'list_id is required (null to clear)');
});

t.test('scopes: campaigns:read reads, campaigns:write changes', async (t) => {
  const c = await createCampaign(s, token, { list_id: listId, from_email: a.from });
  const reader = await createKey(s.app, a.tenant, { scopes: ['campaigns:read'] });
  const writer = await createKey(s.app, a.tenant, { scopes: ['campaigns:write'] });
  const lists = await createKey(s.app, a.tenant, { scopes: ['lists:read', 'lists:write'] });
  const reads = ['/campaigns', `/campaigns/${c.id}`];
  const writes: [Parameters<typeof call>[1], string, unknown][] = [
    ['POST', '/campaigns', { name: 'W', list_id: listId }],
    ['PATCH', `/campaigns/${c.id}`, { name: 'W2' }],
    ['POST', `/campaigns/${c.id}/duplicate`, undefined],
    ['PATCH', `/campaigns/${c.id}/md5-list`, { list_id: null }],
    ['POST', `/campaigns/${c.id}/schedule`, { scheduled_at: new Date(Date.now() + 3_600_000).toISOString() }],
    ['DELETE', `/campaigns/${c.id}/schedule`, undefined],
    ['POST', `/campaigns/${c.id}/send`, undefined],
    ['POST', `/campaigns/${c.id}/pause`, undefined],
    ['POST', `/campaigns/${c.id}/resume`, undefined],
    ['POST', `/campaigns/${c.id}/cancel`, undefined],
    ['DELETE', `/campaigns/${c.id}`, undefined],
  ];
  for (const url of reads) {
    t.equal((await call(s.app, 'GET', url, { token: reader.key })).status, 200, `GET ${url} with campaigns:read`);
    for (const key of [writer.key, lists.key])
      t.same((await call(s.app, 'GET', url, { token: key })).body.error, 'invalid_scope', `GET ${url} needs campaigns:read`);
  }
  for (const [method, url, body] of writes) {
    for (const key of [reader.key, lists.key]) {
      const res = await call(s.app, method, url, { token: key, ...(body !== undefined ? { body } : {}) });
      t.same([res.status, res.body.error], [403, 'invalid_scope'], `${method} ${url} needs campaigns:write`);
    }
  }
  // The writer walks the lifecycle with the same routes.
  for (const [method, url, body] of writes) {
    const res = await call(s.app, method, url, { token: writer.key, ...(body !== undefined ? { body } : {}) });
    t.ok(res.status < 300, `${method} ${url} with campaigns:write: ${res.status} ${res.body.message ?? ''}`);
    if (url.endsWith('/cancel')) break;
  }
});

t.test("another tenant's campaign is 404 on every route, and absent from its list", async (t) => {
  const c = await createCampaign(s, token, { list_id: listId, from_email: a.from });
  const future = new Date(Date.now() + 3_600_000).toISOString();
  await assertForeign404(t, s.app, other.token, [
    { method: 'GET', url: `/campaigns/${c.id}` },
    { method: 'PATCH', url: `/campaigns/${c.id}`, body: { name: 'mine' } },
    { method: 'DELETE', url: `/campaigns/${c.id}` },
    { method: 'POST', url: `/campaigns/${c.id}/duplicate` },
    { method: 'POST', url: `/campaigns/${c.id}/schedule`, body: { scheduled_at: future } },
    { method: 'DELETE', url: `/campaigns/${c.id}/schedule` },
    { method: 'POST', url: `/campaigns/${c.id}/send` },
    { method: 'POST', url: `/campaigns/${c.id}/pause` },
    { method: 'POST', url: `/campaigns/${c.id}/resume` },
    { method: 'POST', url: `/campaigns/${c.id}/cancel` },
    { method: 'PATCH', url: `/campaigns/${c.id}/md5-list`, body: { list_id: null } },
    { method: 'GET', url: '/campaigns/00000000-0000-4000-8000-000000000000' },
    { method: 'GET', url: '/campaigns/not-an-id' },
  ]);
  const theirs = await call(s.app, 'GET', '/campaigns', { token: other.token });
  t.same(theirs.body.data.items, []);
  const [row] = await sql<{ status: string; name: string }[]>`select status, name from campaigns where id = ${c.id}`;
  t.same(row, { status: 'draft', name: 'Newsletter' }, 'nothing changed');
});
