// The inbound message API: list, page, search and filter a mailbox; read parsed and raw; mark; delete; access rules and isolation.
import t from 'tap';
import { buildTestApp, call, countRows, createKey, registerTenant, type TestApp } from '../../helpers/app.js';
import { createTestMailbox, deliverToMailbox, verifiedMailDomain } from '../../helpers/inbound-rows.js';
import { assertForeign404 } from '../../helpers/isolation.js';

async function setup(s: TestApp) {
  const owner = await registerTenant(s.app);
  const domain = await verifiedMailDomain(s.sql, owner.tenantId);
  const box = await createTestMailbox(s.app, owner.token, owner.tenantId, `inbox@${domain}`);
  return { owner, domain, box };
}

const at = (minute: number) => new Date(Date.UTC(2026, 2, 2, 10, minute));
const ids = (res: { body: { data: { id: string }[] } }) => res.body.data.map((m) => m.id);

t.test('list: newest first with the summary fields; mailbox_id required for tenant callers', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const older = await deliverToMailbox(s.sql, box, { subject: 'Older', receivedAt: at(1) });
  const newer = await deliverToMailbox(s.sql, box, { subject: 'Newer', from: 'Bob <bob@else.example>', receivedAt: at(2), seen: true });
  const res = await call(s.app, 'GET', `/mail/messages?mailbox_id=${box.id}`, { token: owner.token });
  t.equal(res.status, 200);
  t.equal(res.body.total, 2);
  t.equal(res.body.next_cursor, null);
  t.same(res.body.data[0], {
    id: newer.messageId,
    mailbox_id: box.id,
    from: 'Bob <bob@else.example>',
    subject: 'Newer',
    received_at: at(2).toISOString(),
    seen: true,
    size_bytes: newer.raw.length,
  });
  t.same(ids(res), [newer.messageId, older.messageId]);

  const missing = await call(s.app, 'GET', '/mail/messages', { token: owner.token });
  t.equal(missing.status, 422);
  t.match(missing.body.message, /^mailbox_id/);
  t.equal((await call(s.app, 'GET', '/mail/messages?mailbox_id=nope', { token: owner.token })).status, 404);
  t.equal((await call(s.app, 'GET', `/mail/messages?mailbox_id=${box.id}&limit=201`, { token: owner.token })).status, 422, 'limit at most 200');
  t.equal((await call(s.app, 'GET', `/mail/messages?mailbox_id=${box.id}&unread=maybe`, { token: owner.token })).status, 422);
  t.equal((await call(s.app, 'GET', `/mail/messages?mailbox_id=${box.id}&after=bogus`, { token: owner.token })).status, 400);
});

t.test('cursor pages cover every message once, even when times differ by a microsecond', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const made: string[] = [];
  for (let i = 0; i < 5; i++) made.push((await deliverToMailbox(s.sql, box, { subject: `m${i}`, receivedAt: at(5) })).messageId);
  // Same millisecond, distinct microseconds: a cursor rounded to ms would skip or repeat rows.
  for (const [i, id] of made.entries()) await s.sql`update mailbox_messages set received_at = received_at + ${i} * interval '1 microsecond' where id = ${id}`;
  const seen: string[] = [];
  let after: string | null = null;
  for (let page = 0; page < 10; page++) {
    const res: { status: number; body: { data: { id: string }[]; next_cursor: string | null; total: number } } = await call(
      s.app,
      'GET',
      `/mail/messages?mailbox_id=${box.id}&limit=2${after ? `&after=${after}` : ''}`,
      { token: owner.token },
    );
    t.equal(res.status, 200);
    t.equal(res.body.total, 5);
    seen.push(...ids(res));
    after = res.body.next_cursor;
    if (!after) break;
  }
  t.same(seen, [...made].reverse(), 'newest (largest microsecond) first, each once');
});

t.test('q searches From and subject case-insensitively; unread filters; PATCH marks read and unread', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const invoice = await deliverToMailbox(s.sql, box, { subject: 'Your INVOICE 42', receivedAt: at(1) });
  const carol = await deliverToMailbox(s.sql, box, { subject: 'Lunch', from: 'Carol <carol@Invoices.example>', receivedAt: at(2) });
  const plain = await deliverToMailbox(s.sql, box, { subject: '100% off', receivedAt: at(3), seen: true });
  const q = (text: string, extra = '') =>
    call(s.app, 'GET', `/mail/messages?mailbox_id=${box.id}&q=${encodeURIComponent(text)}${extra}`, { token: owner.token });
  t.same(ids(await q('invoice')), [carol.messageId, invoice.messageId], 'subject or From, any case');
  t.equal((await q('invoice')).body.total, 2);
  t.same(ids(await q('CAROL@')), [carol.messageId]);
  t.same(ids(await q('100%')), [plain.messageId], '% is a character, not a wildcard');
  t.same(ids(await q('0_o')), [], '_ is a character');
  t.same(ids(await q('alice')), [plain.messageId, invoice.messageId], 'the default sender');

  const list = (extra: string) => call(s.app, 'GET', `/mail/messages?mailbox_id=${box.id}${extra}`, { token: owner.token });
  t.same(ids(await list('&unread=true')), [carol.messageId, invoice.messageId]);
  t.same(ids(await list('&unread=false')), [plain.messageId]);
  t.same(ids(await list('&unread=true&q=lunch')), [carol.messageId], 'filters combine');

  const read = await call(s.app, 'PATCH', `/mail/messages/${carol.messageId}`, { token: owner.token, body: { seen: true } });
  t.equal(read.status, 200);
  t.match(read.body.data, { id: carol.messageId, seen: true, subject: 'Lunch' });
  t.same(ids(await list('&unread=true')), [invoice.messageId]);
  t.equal((await call(s.app, 'PATCH', `/mail/messages/${plain.messageId}`, { token: owner.token, body: { seen: false } })).body.data.seen, false);
  t.equal((await list('&unread=true')).body.total, 2);
  t.equal((await call(s.app, 'PATCH', `/mail/messages/${plain.messageId}`, { token: owner.token, body: { seen: 'yes' } })).status, 422);
  t.equal((await call(s.app, 'PATCH', `/mail/messages/${plain.messageId}`, { token: owner.token, body: { seen: true, flagged: true } })).status, 400);
  t.equal((await call(s.app, 'PATCH', `/mail/messages/${plain.messageId}`, { token: owner.token, body: {} })).status, 422);
});

t.test('a message reads parsed: headers, addresses, bodies, attachment metadata, Authentication-Results', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const msg = await deliverToMailbox(s.sql, box, {
    from: 'Alice Sender <alice@sender.example>',
    cc: 'Dan <dan@cc.example>, eve@cc.example',
    subject: 'Grüße & report',
    messageId: '<abc-123@sender.example>',
    date: new Date('2026-03-02T09:59:00Z'),
    receivedAt: at(1),
  });
  const res = await call(s.app, 'GET', `/mail/messages/${msg.messageId}`, { token: owner.token });
  t.equal(res.status, 200);
  const m = res.body.data;
  t.match(m, {
    id: msg.messageId,
    mailbox_id: box.id,
    subject: 'Grüße & report',
    seen: false,
    size_bytes: msg.raw.length,
    received_at: at(1).toISOString(),
    from: [{ name: 'Alice Sender', address: 'alice@sender.example' }],
    to: [{ name: null, address: box.address }],
    cc: [
      { name: 'Dan', address: 'dan@cc.example' },
      { name: null, address: 'eve@cc.example' },
    ],
    date: '2026-03-02T09:59:00.000Z',
    message_id: '<abc-123@sender.example>',
    text: 'Hello,\nthe report is attached.\n',
    html: /<img src="cid:logo@example.org">/,
    envelope: { mail_from: 'bounce@sender.example', rcpt_to: box.address },
    body_parsed: true,
  });
  t.same(
    m.attachments,
    [
      { filename: 'logo.png', content_type: 'image/png', size: 8, content_id: 'logo@example.org', disposition: 'inline' },
      { filename: 'report.pdf', content_type: 'application/pdf', size: 23, content_id: null, disposition: 'attachment' },
    ],
    'metadata only, no content, in message order (the inline image sits with the HTML)',
  );
  t.same(m.authentication_results, ['mx.mailpath.test; spf=pass smtp.mailfrom=sender.example; dkim=none; dmarc=none header.from=sender.example']);
  t.same(
    m.headers.slice(0, 2).map((h: { name: string }) => h.name),
    ['Received', 'Authentication-Results'],
    'our trace headers on top',
  );
  t.match(m.headers[0].value, /^from mail\.sender\.example .* by mx\.mailpath\.test with ESMTP;/, 'unfolded');
  t.ok(
    m.headers.some((h: { name: string; value: string }) => h.name === 'Subject' && /=\?UTF-8\?/i.test(h.value)),
    'raw header values, encoded-words kept',
  );
  t.notOk(JSON.stringify(m).includes('JVBERi0'), 'no attachment content');
  t.equal((await call(s.app, 'GET', '/mail/messages/0b9c4d2e-1f3a-4b5c-8d6e-7f8091a2b3c4', { token: owner.token })).status, 404);
  t.equal((await call(s.app, 'GET', '/mail/messages/x', { token: owner.token })).status, 404);
});

t.test('raw answers the exact stored bytes as message/rfc822', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const msg = await deliverToMailbox(s.sql, box);
  const res = await s.app.inject({ method: 'GET', url: `/api/v1/mail/messages/${msg.messageId}/raw`, headers: { authorization: `Bearer ${owner.token}` } });
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'message/rfc822');
  t.equal(res.headers['x-content-type-options'], 'nosniff');
  t.ok(res.rawPayload.equals(msg.raw), 'byte for byte');
  t.ok(res.headers['x-ratelimit-limit'], 'rate-limit headers as everywhere');
  const missing = await s.app.inject({
    method: 'GET',
    url: '/api/v1/mail/messages/0b9c4d2e-1f3a-4b5c-8d6e-7f8091a2b3c4/raw',
    headers: { authorization: `Bearer ${owner.token}` },
  });
  t.equal(missing.statusCode, 404);
  t.match(missing.json(), { ok: false, error: 'not_found' }, 'errors stay JSON');
  const doc = (await call(s.app, 'GET', '/openapi.json')).body;
  t.ok(doc.paths['/mail/messages/{id}/raw'].get.responses['200'].content['message/rfc822'], 'documented as message/rfc822');
});

t.test('delete removes the message from the mailbox', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const keep = await deliverToMailbox(s.sql, box, { receivedAt: at(1) });
  const gone = await deliverToMailbox(s.sql, box, { receivedAt: at(2) });
  const res = await call(s.app, 'DELETE', `/mail/messages/${gone.messageId}`, { token: owner.token });
  t.equal(res.status, 200);
  t.same(res.body.data, { deleted: true, id: gone.messageId });
  t.equal((await call(s.app, 'GET', `/mail/messages/${gone.messageId}`, { token: owner.token })).status, 404);
  t.equal((await call(s.app, 'DELETE', `/mail/messages/${gone.messageId}`, { token: owner.token })).status, 404, 'twice');
  const list = await call(s.app, 'GET', `/mail/messages?mailbox_id=${box.id}`, { token: owner.token });
  t.same(ids(list), [keep.messageId]);
  t.equal(list.body.total, 1);
  t.equal(await countRows(s.sql, 'inbound_messages'), 2, 'the stored message stays for the other consumers of it');
});

t.test('tenant callers: unscoped keys read, scoped keys 403; another tenant gets 404 everywhere', async (t) => {
  const s = await buildTestApp(t);
  const { owner, box } = await setup(s);
  const msg = await deliverToMailbox(s.sql, box);
  const unscoped = await createKey(s.app, owner);
  t.equal((await call(s.app, 'GET', `/mail/messages?mailbox_id=${box.id}`, { token: unscoped.key })).status, 200);
  t.equal((await call(s.app, 'GET', `/mail/messages/${msg.messageId}`, { token: unscoped.key })).status, 200);
  const scoped = await createKey(s.app, owner, { scopes: ['events:read'] });
  for (const url of [`/mail/messages?mailbox_id=${box.id}`, `/mail/messages/${msg.messageId}`, `/mail/messages/${msg.messageId}/raw`]) {
    const res = await call(s.app, 'GET', url, { token: scoped.key });
    t.equal(res.status, 403, `${url} with a scoped key`);
    t.equal(res.body.error, 'invalid_scope');
  }
  t.equal((await call(s.app, 'GET', `/mail/messages/${msg.messageId}`)).status, 401);

  const other = await registerTenant(s.app);
  const otherKey = await createKey(s.app, other);
  for (const credential of [other.token, otherKey.key]) {
    await assertForeign404(t, s.app, credential, [
      { method: 'GET', url: `/mail/messages?mailbox_id=${box.id}` },
      { method: 'GET', url: `/mail/messages/${msg.messageId}` },
      { method: 'GET', url: `/mail/messages/${msg.messageId}/raw` },
      { method: 'PATCH', url: `/mail/messages/${msg.messageId}`, body: { seen: true } },
      { method: 'DELETE', url: `/mail/messages/${msg.messageId}` },
    ]);
  }
  const [row] = await s.sql<{ seen: boolean }[]>`select seen from mailbox_messages where id = ${msg.messageId}`;
  t.equal(row!.seen, false, 'untouched by the other tenant');
});
