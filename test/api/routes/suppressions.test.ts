// The suppression list through the API: add, read, list, search, page, bulk add, remove, strict addresses, scopes, isolation.
import t from 'tap';
import type { Clock } from '../../../shared/kernel/clock.js';
import { buildTestApp as buildApp, call, countRows, createKey, registerTenant, type ApiResponse, type TestApp, type TestLike } from '../../helpers/app.js';
import { assertForeign404, twoTenants } from '../../helpers/isolation.js';

/** Real time, but never the same millisecond twice: "newest first" must not hang on a tie broken by random ids. */
const buildTestApp = (t: TestLike) => {
  let last = 0;
  const clock: Clock = { now: () => new Date((last = Math.max(Date.now(), last + 1))) };
  return buildApp(t, { clock });
};

async function add(s: TestApp, token: string, email: string, reason?: string) {
  const res = await call(s.app, 'POST', '/suppressions', { token, body: { email, ...(reason ? { reason } : {}) } });
  if (res.status !== 201) throw new Error(`add suppression: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** A test name TAP can print: JSON.stringify leaves U+2028 and other non-ASCII raw, which would break the TAP line. */
const label = (text: string) => JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

const emailsOf = (res: { body: { data: { email: string }[] } }) => res.body.data.map((s) => s.email);

t.test('add, read, list and remove; addresses are stored trimmed and lower-cased; changes are audited', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const res = await call(s.app, 'POST', '/suppressions', { token: owner.token, body: { email: '  Jane.Doe+News@Example.COM ' } });
  t.equal(res.status, 201);
  const made = res.body.data;
  t.match(made, { id: String, email: 'jane.doe+news@example.com', reason: 'manual', source: 'api', detail: null, message_id: null, created_at: String });
  t.equal((await add(s, owner.token, 'Someone@Bücher.example', 'spam_trap')).email, 'someone@xn--bcher-kva.example', 'IDNA domain');

  const got = await call(s.app, 'GET', `/suppressions/${made.id}`, { token: owner.token });
  t.equal(got.status, 200);
  t.same(got.body.data, made);
  const list = await call(s.app, 'GET', '/suppressions', { token: owner.token });
  t.equal(list.status, 200);
  t.equal(list.body.total, 2);
  t.equal(list.body.next_cursor, null);
  t.same(emailsOf(list), ['someone@xn--bcher-kva.example', 'jane.doe+news@example.com'], 'newest first');

  const del = await call(s.app, 'DELETE', `/suppressions/${made.id}`, { token: owner.token });
  t.equal(del.status, 200);
  t.same(del.body.data, { deleted: true, id: made.id });
  t.equal((await call(s.app, 'GET', `/suppressions/${made.id}`, { token: owner.token })).status, 404);
  t.equal((await call(s.app, 'DELETE', `/suppressions/${made.id}`, { token: owner.token })).status, 404, 'deleting twice');
  t.equal((await call(s.app, 'GET', '/suppressions/not-a-uuid', { token: owner.token })).status, 404, 'a malformed id names nothing');
  t.equal(
    (await call(s.app, 'POST', '/suppressions', { token: owner.token, body: { email: 'jane.doe+news@example.com' } })).status,
    201,
    'can be suppressed again',
  );

  const audit = await s.sql<{ action: string; actor_type: string; actor_id: string; resource_id: string; metadata: Record<string, unknown> }[]>`
    select action, actor_type, actor_id, resource_id, metadata from audit_events
    where tenant_id = ${owner.tenantId} and resource_type = 'suppression' order by id`;
  t.same(
    audit.map((a) => a.action),
    ['suppression.added', 'suppression.added', 'suppression.removed', 'suppression.added'],
  );
  t.match(audit[2], { actor_type: 'user', actor_id: owner.userId, resource_id: made.id, metadata: { email: 'jane.doe+news@example.com', reason: 'manual' } });
});

t.test('an address already suppressed is 409, whatever its case', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  await add(s, owner.token, 'dup@example.com');
  for (const email of ['dup@example.com', 'DUP@Example.Com', ' dup@example.com\t']) {
    const res = await call(s.app, 'POST', '/suppressions', { token: owner.token, body: { email } });
    t.equal(res.status, 409, label(email));
    t.equal(res.body.error, 'conflict');
    t.match(res.body.message, /dup@example\.com is already suppressed/);
  }
  t.equal(await countRows(s.sql, 'suppressions'), 1);
});

t.test('invalid addresses are 422 naming email, header-injection attempts included; nothing is written', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const bad = [
    '',
    '   ',
    'plain',
    '@example.com',
    'user@',
    'user@@example.com',
    'a@b@example.com',
    'user@localhost',
    'user@example',
    'user name@example.com',
    'user@exa mple.com',
    '"quoted"@example.com',
    '.user@example.com',
    'user.@example.com',
    'us..er@example.com',
    'user@example.com.',
    'user@[192.0.2.1]',
    'user@192.0.2.1',
    'user@-bad.example.com',
    'user@example.123',
    'üser@example.com',
    `${'a'.repeat(65)}@example.com`,
    `user@${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(60)}.com`,
    'victim@example.com\r\nBcc: everyone@example.com',
    'victim@example.com\nBcc: x@example.com',
    'victim@example.com\r\n',
    '\r\nvictim@example.com',
    'victim@example.com\rX-Injected: 1',
    'victim@example.com\u2028Bcc: x@example.com',
    'user@example.com\u0085',
    'victim%0d%0a@example.com\u000b',
    '\u00a0user@example.com',
    'us\u200ber@example.com',
    'user@exa\u00admple.com',
    `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(58)}.com`,
  ];
  for (const email of bad) {
    const res = await call(s.app, 'POST', '/suppressions', { token: owner.token, body: { email } });
    t.equal(res.status, 422, `${label(email)} → 422`);
    t.equal(res.body.error, 'validation_error');
    t.match(res.body.message, /^email\b/, 'the message names the field');
  }
  t.equal(
    (await call(s.app, 'POST', '/suppressions', { token: owner.token, body: { email: 'a@example.com', reason: 'bored' } })).status,
    422,
    'unknown reason',
  );
  t.equal((await call(s.app, 'POST', '/suppressions', { token: owner.token, body: { email: 42 } })).status, 422, 'wrong type');
  t.equal((await call(s.app, 'POST', '/suppressions', { token: owner.token, body: { email: 'a@example.com', note: 'x' } })).status, 400, 'unknown field');
  t.equal((await call(s.app, 'POST', '/suppressions', { token: owner.token, body: { email: 'a\u0000@example.com' } })).status, 422, 'NUL');
  t.equal(await countRows(s.sql, 'suppressions'), 0, 'nothing was written');
  const longest = `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`;
  t.equal(longest.length, 254);
  t.equal((await add(s, owner.token, longest)).email, longest, '254 characters is the cap, not over it');
  t.equal(
    (await add(s, owner.token, "o'brien!#$%&*+/=?^_`{|}~-x@sub.example.co.uk")).email,
    "o'brien!#$%&*+/=?^_`{|}~-x@sub.example.co.uk",
    'every atext character is fine',
  );
});

t.test('bulk: one result per address in order, with totals', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const existing = await add(s, owner.token, 'old@example.com');
  const emails = ['new1@example.com', 'OLD@example.com', 'not-an-address', 'New1@Example.com', 'new2@example.com', 'x@example.com\r\nBcc: y@example.com'];
  const res = await call(s.app, 'POST', '/suppressions/bulk', { token: owner.token, body: { emails, reason: 'unsubscribe' } });
  t.equal(res.status, 200);
  const r = res.body.data.results;
  t.equal(r.length, emails.length);
  t.match(r[0], { input: 'new1@example.com', email: 'new1@example.com', status: 'added', id: String, message: null });
  t.match(r[1], { input: 'OLD@example.com', email: 'old@example.com', status: 'already_suppressed', id: existing.id, message: null });
  t.match(r[2], { input: 'not-an-address', email: null, status: 'invalid', id: null, message: /^emails\.2: / });
  t.match(r[3], { email: 'new1@example.com', status: 'already_suppressed', id: r[0].id }, 'a repeat within the call');
  t.match(r[4], { status: 'added', id: String });
  t.match(r[5], { status: 'invalid', message: /^emails\.5: must not contain line breaks/ });
  t.same(res.body.data.totals, { added: 2, already_suppressed: 2, invalid: 2 });

  const stored = (await call(s.app, 'GET', `/suppressions/${r[0].id}`, { token: owner.token })).body.data;
  t.match(stored, { email: 'new1@example.com', reason: 'unsubscribe', source: 'api' });
  t.equal(await countRows(s.sql, 'suppressions'), 3);
  const [audit] = await s.sql<{ metadata: { bulk: boolean; count: number; emails: string[] } }[]>`
    select metadata from audit_events where action = 'suppression.added' and resource_id is null`;
  t.same(audit!.metadata.emails.sort(), ['new1@example.com', 'new2@example.com'], 'one audit row for the batch');

  const again = await call(s.app, 'POST', '/suppressions/bulk', { token: owner.token, body: { emails: ['new2@example.com', 'bad'] } });
  t.same(again.body.data.totals, { added: 0, already_suppressed: 1, invalid: 1 });
  t.equal(
    (await s.sql`select 1 from audit_events where action = 'suppression.added' and resource_id is null`).length,
    1,
    'no audit row when nothing was added',
  );

  const many = Array.from({ length: 1000 }, (_, i) => `user${i}@bulk.example`);
  const full = await call(s.app, 'POST', '/suppressions/bulk', { token: owner.token, body: { emails: many } });
  t.match(full, { status: 200, body: { data: { totals: { added: 1000, already_suppressed: 0, invalid: 0 } } } }, '1000 in one call');
  const over = await call(s.app, 'POST', '/suppressions/bulk', { token: owner.token, body: { emails: [...many, 'one@more.example'] } });
  t.match(over, { status: 422, body: { message: /^emails/ } }, '1001 is too many');
  t.equal((await call(s.app, 'POST', '/suppressions/bulk', { token: owner.token, body: { emails: [] } })).status, 422, 'empty list');
  t.equal((await call(s.app, 'POST', '/suppressions/bulk', { token: owner.token, body: { emails: 'a@example.com' } })).status, 422, 'not a list');
  t.equal((await call(s.app, 'POST', '/suppressions/bulk', { token: owner.token, body: { emails: ['a@example.com'], extra: true } })).status, 400);
});

t.test('filters: reason and a case-insensitive contains search', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  await s.sql`insert into suppressions (tenant_id, email, reason, source, detail, created_at)
    values (${owner.tenantId}, 'bounced@example.com', 'hard_bounce', 'bounce', '550 5.1.1 user unknown', now() - interval '1 day')`;
  await add(s, owner.token, 'alice@shop.example');
  await add(s, owner.token, 'bob@shop.example', 'complaint');
  await add(s, owner.token, 'a_b%c@other.example');
  await add(s, owner.token, 'axbyc@other.example');

  const q = async (query: string) => call(s.app, 'GET', `/suppressions?${query}`, { token: owner.token });
  let res = await q('reason=hard_bounce');
  t.match(res.body, { total: 1, data: [{ email: 'bounced@example.com', source: 'bounce', detail: '550 5.1.1 user unknown' }] });
  res = await q('q=SHOP.example');
  t.same(emailsOf(res), ['bob@shop.example', 'alice@shop.example']);
  t.equal(res.body.total, 2, 'total counts the matches');
  t.same(emailsOf(await q('q=shop&reason=manual')), ['alice@shop.example'], 'filters combine');
  t.same(emailsOf(await q(`q=${encodeURIComponent('_b%')}`)), ['a_b%c@other.example'], 'wildcards are searched for literally');
  t.equal((await q('q=')).body.total, 5, 'an empty search matches everything');
  t.equal((await q('reason=bored')).status, 422);
  t.equal((await q(`q=${'x'.repeat(255)}`)).status, 422);
});

t.test('list: cursor pages, newest first; a forged cursor is 400', async (t) => {
  const s = await buildTestApp(t);
  const { owner, other } = await twoTenants(s.app);
  for (const n of [1, 2, 3, 4, 5]) await add(s, owner.token, `page${n}@example.com`);
  await add(s, other.token, 'others@example.com');
  const seen: string[] = [];
  let after: string | null = null;
  let pages = 0;
  do {
    const res: ApiResponse = await call(s.app, 'GET', `/suppressions?limit=2${after ? `&after=${after}` : ''}`, { token: owner.token });
    t.equal(res.status, 200);
    t.equal(res.body.total, 5);
    seen.push(...emailsOf(res));
    after = res.body.next_cursor;
    pages++;
  } while (after && pages < 10);
  t.equal(pages, 3);
  t.same(seen, ['page5@example.com', 'page4@example.com', 'page3@example.com', 'page2@example.com', 'page1@example.com']);

  const page = await call(s.app, 'GET', '/suppressions?limit=1&reason=manual&q=page', { token: owner.token });
  const next = await call(s.app, 'GET', `/suppressions?limit=10&reason=manual&q=page&after=${page.body.next_cursor}`, { token: owner.token });
  t.equal(next.body.data.length, 4, 'a cursor combines with the filters');
  for (const bad of ['nonsense', Buffer.from('2026-01-01T00:00:00.000Z|not-a-uuid').toString('base64url')]) {
    const res = await call(s.app, 'GET', `/suppressions?after=${bad}`, { token: owner.token });
    t.equal(res.status, 400, `cursor ${bad}`);
    t.equal(res.body.error, 'bad_request');
  }
  t.equal((await call(s.app, 'GET', '/suppressions?limit=0', { token: owner.token })).status, 422);
  t.equal((await call(s.app, 'GET', '/suppressions?limit=201', { token: owner.token })).status, 422);
});

t.test('scopes: suppressions:read reads, suppressions:write changes', async (t) => {
  const s = await buildTestApp(t);
  const owner = await registerTenant(s.app);
  const made = await add(s, owner.token, 'scoped@example.com');
  const reader = await createKey(s.app, owner, { scopes: ['suppressions:read'] });
  const writer = await createKey(s.app, owner, { scopes: ['suppressions:write'] });
  const other = await createKey(s.app, owner, { scopes: ['domains:read', 'domains:write'] });
  t.equal((await call(s.app, 'GET', '/suppressions', { token: reader.key })).status, 200);
  t.equal((await call(s.app, 'GET', `/suppressions/${made.id}`, { token: reader.key })).status, 200);
  const writes = [
    { method: 'POST' as const, url: '/suppressions', body: { email: 'w@example.com' } },
    { method: 'POST' as const, url: '/suppressions/bulk', body: { emails: ['w@example.com'] } },
    { method: 'DELETE' as const, url: `/suppressions/${made.id}` },
  ];
  for (const key of [reader.key, other.key]) {
    for (const w of writes) {
      const res = await call(s.app, w.method, w.url, { token: key, ...(w.body ? { body: w.body } : {}) });
      t.equal(res.status, 403, `${w.method} ${w.url} needs suppressions:write`);
      t.equal(res.body.error, 'invalid_scope');
    }
  }
  for (const url of ['/suppressions', `/suppressions/${made.id}`]) {
    const res = await call(s.app, 'GET', url, { token: writer.key });
    t.equal(res.status, 403, `GET ${url}: write does not imply read`);
    t.equal(res.body.error, 'invalid_scope');
  }
  t.equal(await countRows(s.sql, 'suppressions'), 1, 'the refused calls wrote nothing');
  t.equal((await call(s.app, 'POST', '/suppressions', { token: writer.key, body: { email: 'w@example.com' } })).status, 201);
  t.equal((await call(s.app, 'POST', '/suppressions/bulk', { token: writer.key, body: { emails: ['w2@example.com'] } })).status, 200);
  const del = await call(s.app, 'DELETE', `/suppressions/${made.id}`, { token: writer.key });
  t.equal(del.status, 200);
  const [audit] = await s.sql<{ actor_type: string; actor_id: string }[]>`
    select actor_type, actor_id from audit_events where action = 'suppression.removed' and resource_id = ${made.id}`;
  t.same(audit, { actor_type: 'api_key', actor_id: writer.id }, 'the key is the actor');
  t.equal((await call(s.app, 'GET', '/suppressions')).status, 401);
});

t.test("another tenant's suppressions are 404 and stay out of its list", async (t) => {
  const s = await buildTestApp(t);
  const { owner, other } = await twoTenants(s.app);
  const mine = await add(s, owner.token, 'private@example.com');
  const otherKey = await createKey(s.app, other);
  const requests = [
    { method: 'GET' as const, url: `/suppressions/${mine.id}` },
    { method: 'DELETE' as const, url: `/suppressions/${mine.id}` },
    { method: 'GET' as const, url: '/suppressions/not-a-uuid' },
    { method: 'DELETE' as const, url: '/suppressions/00000000-0000-4000-8000-000000000000' },
  ];
  await assertForeign404(t, s.app, other.token, requests);
  await assertForeign404(t, s.app, otherKey.key, requests);
  const list = await call(s.app, 'GET', '/suppressions?q=private', { token: otherKey.key });
  t.same(list.body.data, []);
  t.equal(list.body.total, 0);
  t.equal(
    (await call(s.app, 'POST', '/suppressions', { token: other.token, body: { email: 'private@example.com' } })).status,
    201,
    'each tenant has its own list',
  );
  t.equal((await call(s.app, 'GET', `/suppressions/${mine.id}`, { token: owner.token })).status, 200, 'still there for its owner');
  t.equal(await countRows(s.sql, 'suppressions', owner.tenantId), 1);
});
