// POST /transactional/send end to end through the API: answers, quota headers, bad input, templates, idempotency, the outbound log and events.
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant, type TestTenant } from '../../helpers/app.js';
import { startDnsServer } from '../../helpers/dns-server.js';
import { assertForeign404 } from '../../helpers/isolation.js';
import { verifiedSendingDomain, type SendingDomain } from '../../helpers/sending-domain.js';

const dns = await startDnsServer(t);
const { app, ctx, sql } = await buildTestApp(t, {
  env: {
    MAILPATH_DNS_SERVERS: dns.address,
    MAILPATH_CONFIG__LIMITS__SEND__MAX_ATTACHMENT_BYTES: '1000',
    MAILPATH_CONFIG__LIMITS__SEND__MAX_BODY_BYTES: '4096',
    MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[50, 100]',
  },
});

interface Sender {
  tenant: TestTenant;
  key: string;
  keyId: string;
  domain: SendingDomain;
}

async function sender(options: { verified?: boolean } = {}): Promise<Sender> {
  const tenant = await registerTenant(app);
  const { key, id } = await createKey(app, tenant, { scopes: ['transactional:send', 'events:read'] });
  const domain =
    options.verified === false ? ({ id: '', name: 'unverified.example' } as SendingDomain) : await verifiedSendingDomain(sql, ctx.vault, tenant.tenantId);
  return { tenant, key, keyId: id, domain };
}

const message = (s: Sender, over: Record<string, unknown> = {}) => ({
  to: 'Reader@Dest.example',
  from_email: `hello@${s.domain.name}`,
  subject: 'Your receipt',
  body_text: 'Thanks!',
  body_html: '<p>Thanks!</p>',
  ...over,
});

const send = (s: Sender, body: unknown, headers: Record<string, string> = {}, token = s.key) =>
  call(app, 'POST', '/transactional/send', { token, body, headers });

t.test('202 queued: signed multipart message, quota headers, visible in /sends and /events', async (t) => {
  const s = await sender();
  const res = await send(s, message(s, { from_name: 'Shop', reply_to: 'support@shop.example', headers: { 'X-Order': '42' } }));
  t.equal(res.status, 202, JSON.stringify(res.body));
  t.equal(res.body.data.status, 'queued');
  t.equal(res.headers['x-quota-used'], '1');
  t.equal(res.headers['x-quota-cap'], '3000');
  t.equal(res.headers['x-quota-remaining'], '2999');
  t.equal(res.headers['x-quota-warning'], undefined);
  const id = res.body.data.message_id as string;
  const [row] = await sql<{ message: Buffer }[]>`select message from sends where id = ${id}`;
  const raw = row!.message.toString();
  t.match(raw, /^DKIM-Signature: /);
  t.match(raw, /\r\nFrom: Shop <hello@/);
  t.match(raw, /\r\nTo: reader@dest\.example\r\n/);
  t.match(raw, /\r\nReply-To: support@shop\.example\r\n/);
  t.match(raw, /\r\nX-Order: 42\r\n/);
  t.match(raw, /Content-Type: multipart\/alternative/);
  t.match(raw, new RegExp(`Message-ID: <${id}@mx\\.mailpath\\.local>`));

  const detail = await call(app, 'GET', `/sends/${id}`, { token: s.key });
  t.equal(detail.status, 200);
  t.match(detail.body.data, {
    id,
    status: 'queued',
    source: 'api',
    mode: 'live',
    to: 'reader@dest.example',
    envelope: { rcpt_to: 'reader@dest.example', mail_from: /^b-[0-9a-f]{32}-/ },
  });
  t.same(
    detail.body.data.gate_decisions.map((d: { gate: string }) => d.gate),
    ['suspended', 'test_key', 'sandbox', 'suppression', 'quota', 'esp_suppression', 'per_esp', 'warmup'],
  );
  t.same(detail.body.data.attempts, []);
  t.same(
    detail.body.data.events.map((e: { type: string }) => e.type),
    ['send'],
  );

  const list = await call(app, 'GET', '/sends?status=queued&recipient=READER@dest.example', { token: s.key });
  t.same(
    list.body.data.map((x: { id: string }) => x.id),
    [id],
  );
  t.equal(list.body.total, 1);
  const events = await call(app, 'GET', `/events?message_id=${id}&type=send`, { token: s.key });
  t.equal(events.body.total, 1);
  t.match(events.body.data[0], { type: 'send', message_id: id, rfc_message_id: `${id}@mx.mailpath.local`, recipient: 'reader@dest.example' });
  const byHeader = await call(app, 'GET', `/events?message_id=${encodeURIComponent(`<${id}@mx.mailpath.local>`)}`, { token: s.key });
  t.equal(byHeader.body.total, 1, 'also found by the Message-ID header');
});

t.test('412 without a verified domain and 422 naming from_email for an unverified one, with quota headers', async (t) => {
  const none = await sender({ verified: false });
  const res = await send(none, message(none));
  t.equal(res.status, 412);
  t.equal(res.body.error, 'no_verified_domain');
  t.equal(res.headers['x-quota-used'], '0');
  const s = await sender();
  const other = await send(s, message(s, { from_email: 'me@elsewhere.example' }));
  t.equal(other.status, 422);
  t.match(other.body.message, /^from_email: /);
});

t.test('bad input is refused with the field named and nothing stored', async (t) => {
  const s = await sender();
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ to: 'not an address' }, /^to: /],
    [{ to: 'a@b.example, c@d.example' }, /^to: /],
    [{ subject: 'Hi\r\nBcc: victim@x.example' }, /^subject: .*line breaks/],
    [{ from_name: 'Shop\nBcc: x@y.example' }, /^from_name: /],
    [{ headers: { 'X-Evil': 'a\r\nBcc: x@y.example' } }, /^headers\.X-Evil: /],
    [{ headers: { Bcc: 'x@y.example' } }, /^headers\.Bcc: /],
    // Identity and routing fields other parsers act on (RFC 5322 §3.6.6, RFC 3798), in any case.
    [{ headers: { 'resent-from': 'ceo@evil.example' } }, /^headers\.resent-from: is reserved/],
    [{ headers: { 'Disposition-Notification-To': 'spy@evil.example' } }, /^headers\.Disposition-Notification-To: is reserved/],
    [{ headers: { 'ERRORS-TO': 'spy@evil.example' } }, /^headers\.ERRORS-TO: is reserved/],
    [{ headers: { 'ARC-Seal': 'i=1; cv=none' } }, /^headers\.ARC-Seal: is reserved/],
    [{ headers: { 'Bad Name': 'x' } }, /^headers\.Bad Name: /],
    [{ reply_to: 'nope' }, /^reply_to: /],
    [{ attachments: [{ filename: 'a.txt', content: 'not base64!' }] }, /^attachments\.0\.content: /],
    [{ attachments: [{ filename: 'big.bin', content: Buffer.alloc(1200).toString('base64') }] }, /^attachments: .*1000 bytes/],
    [{ attachments: [{ filename: '../etc/passwd', content: 'aGk=' }] }, /^attachments\.0\.filename: /],
    [{ body_text: undefined, body_html: undefined }, /^body_text: /],
    [{ subject: '' }, /^subject: /],
    [{ template_id: '00000000-0000-0000-0000-000000000000' }, /^subject: .*template_id/],
    [{ subject: undefined, body_text: undefined, body_html: undefined, template_id: '00000000-0000-0000-0000-000000000000' }, /^template_id: no such template/],
    [{ variables: { a: 1 } }, /^variables: /],
    [{ body_text: 'x'.repeat(4097) }, /^body_text: is 4097 bytes, more than the 4096 allowed/],
    [{ body_html: `<p>${'é'.repeat(2100)}</p>` }, /^body_html: .*more than the 4096 allowed/],
  ];
  for (const [over, pattern] of cases) {
    const res = await send(s, message(s, over));
    t.equal(res.status, 422, JSON.stringify(over));
    t.equal(res.body.error, 'validation_error');
    t.match(res.body.message, pattern, JSON.stringify(over));
  }
  t.equal((await send(s, { ...message(s), cc: 'x@y.example' })).status, 400, 'an unknown field is a bad request');
  const [n] = await sql<{ n: number }[]>`select count(*)::int as n from sends where tenant_id = ${s.tenant.tenantId}`;
  t.equal(n!.n, 0);
});

t.test('a template renders per recipient: default filter, if on a field, contact.email, custom_fields', async (t) => {
  const s = await sender();
  const created = await call(app, 'POST', '/templates', {
    token: s.tenant.token,
    body: {
      name: 'Welcome',
      subject: 'Hi {{ first_name | default: "there" }}',
      body_text: '{% if country == "FR" %}Bonjour{% else %}Hello{% endif %} {{ contact.email }}, plan {{ custom_fields.plan }}',
      body_html: '<p>{{ first_name }}</p>',
    },
  });
  t.equal(created.status, 201);
  const res = await send(s, {
    to: 'reader@dest.example',
    from_email: `hello@${s.domain.name}`,
    template_id: created.body.data.id,
    variables: { country: 'FR', first_name: '<b>Ann</b>', custom_fields: { plan: 'gold' } },
  });
  t.equal(res.status, 202, JSON.stringify(res.body));
  const [row] = await sql<{ message: Buffer; subject: string }[]>`select message, subject from sends where id = ${res.body.data.message_id}`;
  t.equal(row!.subject, 'Hi <b>Ann</b>');
  const raw = row!.message.toString();
  t.match(raw, /Bonjour reader@dest\.example, plan gold/);
  t.match(raw, /&lt;b&gt;Ann&lt;\/b&gt;/, 'HTML body escapes variables');
  const defaulted = await send(s, { to: 'x@dest.example', from_email: `hello@${s.domain.name}`, template_id: created.body.data.id, variables: {} });
  const [second] = await sql<{ subject: string }[]>`select subject from sends where id = ${defaulted.body.data.message_id}`;
  t.equal(second!.subject, 'Hi there');
  const heavy = await call(app, 'POST', '/templates', {
    token: s.tenant.token,
    body: { name: 'Heavy', subject: 'Hi', body_text: '{% for i in (1..100000) %}{{ chunk }}{% endfor %}' },
  });
  const failed = await send(s, {
    to: 'x@dest.example',
    from_email: `hello@${s.domain.name}`,
    template_id: heavy.body.data.id,
    variables: { chunk: 'x'.repeat(100) },
  });
  t.equal(failed.status, 422, 'a Liquid render that fails at send time is 422');
  t.match(failed.body.message, /^body_text: /);
  const foreign = await sender();
  const other = await send(foreign, { to: 'x@dest.example', from_email: `hello@${foreign.domain.name}`, template_id: created.body.data.id });
  t.equal(other.status, 422, "another tenant's template does not exist for it");
});

t.test('test keys simulate without using quota; a suspended tenant is refused even with a test key; sandbox tenants simulate', async (t) => {
  const s = await sender();
  const { key: testKey } = await createKey(app, s.tenant, { mode: 'test', scopes: ['transactional:send'] });
  t.match(testKey, /^mp_test_/);
  const res = await send(s, message(s), {}, testKey);
  t.equal(res.status, 202);
  t.equal(res.body.data.status, 'simulated');
  t.equal(res.headers['x-quota-used'], '0');
  const sandbox = await sender();
  await sql`update tenants set is_sandbox = true where id = ${sandbox.tenant.tenantId}`;
  ctx.credentials.forgetTenant(sandbox.tenant.tenantId);
  t.equal((await send(sandbox, message(sandbox))).body.data.status, 'simulated');
  await sql`update tenants set status = 'suspended' where id = ${s.tenant.tenantId}`;
  ctx.credentials.forgetTenant(s.tenant.tenantId);
  const refused = await send(s, message(s), {}, testKey);
  t.equal(refused.status, 403);
  t.equal(refused.body.error, 'forbidden');
});

t.test('scope: a key without transactional:send gets 403 invalid_scope', async (t) => {
  const s = await sender();
  const { key } = await createKey(app, s.tenant, { scopes: ['events:read'] });
  const res = await send(s, message(s), {}, key);
  t.equal(res.status, 403);
  t.equal(res.body.error, 'invalid_scope');
});

t.test('quota: warning from 80 %, 402 quota_exceeded at the cap, nothing stored for the refusal', async (t) => {
  const s = await sender();
  await sql`insert into plans (id, name, monthly_send_cap) values ('five', 'Five', 5) on conflict do nothing`;
  await sql`update tenants set plan_id = 'five' where id = ${s.tenant.tenantId}`;
  const warnings: (string | undefined)[] = [];
  for (let i = 0; i < 5; i++) warnings.push((await send(s, message(s, { to: `r${i}@dest.example` }))).headers['x-quota-warning'] as string | undefined);
  t.same(warnings, [undefined, undefined, undefined, '1', '1']);
  const refused = await send(s, message(s));
  t.equal(refused.status, 402);
  t.equal(refused.body.error, 'quota_exceeded');
  t.equal(refused.headers['x-quota-remaining'], '0');
  t.equal(refused.headers['x-quota-used'], '5');
  const [n] = await sql<{ n: number }[]>`select count(*)::int as n from sends where tenant_id = ${s.tenant.tenantId}`;
  t.equal(n!.n, 5);
});

t.test('Idempotency-Key: same body replays the first answer, another body is 409, concurrent repeats send once', async (t) => {
  const s = await sender();
  const first = await send(s, message(s), { 'Idempotency-Key': 'order-1' });
  t.equal(first.status, 202);
  const again = await send(s, message(s), { 'Idempotency-Key': 'order-1' });
  t.equal(again.status, 202);
  t.same(again.body.data, first.body.data);
  t.equal(again.headers['idempotent-replayed'], 'true');
  const reordered = await send(s, Object.fromEntries(Object.entries(message(s)).reverse()), { 'Idempotency-Key': 'order-1' });
  t.same(reordered.body.data, first.body.data, 'key order does not make another body');
  const clash = await send(s, message(s, { subject: 'Another' }), { 'Idempotency-Key': 'order-1' });
  t.equal(clash.status, 409);
  t.equal(clash.body.error, 'conflict');
  const racing = await Promise.all(Array.from({ length: 8 }, () => send(s, message(s, { to: 'race@dest.example' }), { 'Idempotency-Key': 'race' })));
  const accepted = racing.filter((r) => r.status === 202);
  t.ok(accepted.length >= 1);
  t.ok(racing.every((r) => r.status === 202 || r.status === 409));
  t.equal(new Set(accepted.map((r) => r.body.data.message_id)).size, 1, 'one message id');
  const [n] = await sql<{ n: number }[]>`select count(*)::int as n from sends where tenant_id = ${s.tenant.tenantId} and to_email = 'race@dest.example'`;
  t.equal(n!.n, 1, 'one send stored');
  const refused = await send(s, message(s, { to: 'bad' }), { 'Idempotency-Key': 'fails' });
  t.equal(refused.status, 422);
  t.equal((await send(s, message(s), { 'Idempotency-Key': 'fails' })).status, 202, 'a failed request does not hold its key');
  t.equal((await send(s, message(s), { 'Idempotency-Key': 'has space' })).status, 422);
  const { key: testKey } = await createKey(app, s.tenant, { mode: 'test', scopes: ['transactional:send'] });
  const simulated = await send(s, message(s, { to: 'mode@dest.example' }), { 'Idempotency-Key': 'per-mode' }, testKey);
  t.equal(simulated.body.data.status, 'simulated');
  const live = await send(s, message(s, { to: 'mode@dest.example' }), { 'Idempotency-Key': 'per-mode' });
  t.equal(live.body.data.status, 'queued', "a live key never replays a test key's simulated answer");
});

t.test('bounce_risk_check_enabled: no MX or A, null MX and suppressed recipients are 422; a domain with MX passes', async (t) => {
  const s = await sender();
  dns.setMx('good.example', [{ exchange: 'mx.good.example', priority: 10 }]);
  dns.setA('a-only.example', ['192.0.2.1']);
  dns.setMx('null-mx.example', [{ exchange: '.', priority: 0 }]);
  await call(app, 'POST', '/suppressions', { token: s.tenant.token, body: { email: 'gone@good.example' } });
  const check = (to: string) => send(s, message(s, { to, bounce_risk_check_enabled: true }));
  t.equal((await check('ok@good.example')).status, 202);
  t.equal((await check('ok@a-only.example')).status, 202, 'an A record is an implicit MX');
  const nothing = await check('x@nothing.example');
  t.equal(nothing.status, 422);
  t.match(nothing.body.message, /^to: the domain nothing\.example has no MX or A\/AAAA record/);
  t.match((await check('x@null-mx.example')).body.message, /null MX/);
  const suppressed = await check('gone@good.example');
  t.equal(suppressed.status, 422);
  t.match(suppressed.body.message, /suppression list/);
  t.equal((await send(s, message(s, { to: 'gone@good.example' }))).body.data.status, 'dropped', 'without the check it is dropped');
});

t.test('warm-up: 200 parallel sends against a cap of 50 let exactly 50 through, the rest deferred to 00:00 UTC', async (t) => {
  const s = await sender();
  const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => send(s, message(s, { to: `w${i}@dest.example` }))));
  t.ok(answers.every((a) => a.status === 202));
  const statuses = answers.map((a) => a.body.data.status as string);
  t.equal(statuses.filter((x) => x === 'queued').length, 50);
  t.equal(statuses.filter((x) => x === 'deferred').length, 150);
  const deferred = await call(app, 'GET', '/sends?status=deferred&limit=1', { token: s.key });
  const midnight = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1)).toISOString();
  t.equal(deferred.body.data[0].defer_until, midnight);
  t.equal(deferred.body.total, 150);
  const events = await call(app, 'GET', '/events?type=deferred&limit=1', { token: s.key });
  t.equal(events.body.total, 150);
});

t.test("an automatic per-provider suppression in force defers the tenant's new mail to that provider until it expires", async (t) => {
  const s = await sender();
  const until = new Date(Date.now() + 4 * 3_600_000);
  await sql`insert into esp_suppressions (tenant_id, provider, reason, refusals, window_minutes, triggered_at, expires_at)
            values (${s.tenant.tenantId}, 'yahoo', 'blocked', 10, 15, now(), ${until})`;
  const held = await send(s, message(s, { to: 'reader@yahoo.com' }));
  t.equal(held.status, 202);
  t.equal(held.body.data.status, 'deferred');
  const row = await call(app, 'GET', `/sends/${held.body.data.message_id}`, { token: s.key });
  t.equal(row.body.data.defer_until, until.toISOString());
  t.match(row.body.data.status_detail, /yahoo is refusing this account's mail/);
  t.equal((await send(s, message(s, { to: 'reader@gmail.com' }))).body.data.status, 'queued', 'other providers are not held');
});

t.test("another tenant's sends are 404 and its events invisible", async (t) => {
  const s = await sender();
  const other = await sender();
  const res = await send(s, message(s));
  await assertForeign404(t, app, other.key, [{ method: 'GET', url: `/sends/${res.body.data.message_id}` }]);
  t.equal((await call(app, 'GET', `/events?message_id=${res.body.data.message_id}`, { token: other.key })).body.total, 0);
  t.equal((await call(app, 'GET', '/sends', { token: other.key })).body.total, 0);
  t.equal((await call(app, 'GET', '/sends/not-a-uuid', { token: s.key })).status, 404);
  t.equal((await call(app, 'GET', '/sends?after=forged', { token: s.key })).status, 400);
});

t.test('cursor pages of /sends and /events walk everything once', async (t) => {
  const s = await sender();
  for (let i = 0; i < 5; i++) await send(s, message(s, { to: `p${i}@dest.example` }));
  const seen: string[] = [];
  let after: string | null = null;
  for (let page = 0; page < 10; page++) {
    const res: { body: { data: { id: string }[]; next_cursor: string | null } } = await call(app, 'GET', `/sends?limit=2${after ? `&after=${after}` : ''}`, {
      token: s.key,
    });
    seen.push(...res.body.data.map((x) => x.id));
    after = res.body.next_cursor;
    if (!after) break;
  }
  t.equal(seen.length, 5);
  t.equal(new Set(seen).size, 5);
  const events: string[] = [];
  after = null;
  for (let page = 0; page < 10; page++) {
    const res: { body: { data: { id: string }[]; next_cursor: string | null } } = await call(app, 'GET', `/events?limit=3${after ? `&after=${after}` : ''}`, {
      token: s.key,
    });
    events.push(...res.body.data.map((x) => x.id));
    after = res.body.next_cursor;
    if (!after) break;
  }
  t.equal(new Set(events).size, 5);
});

t.test('GET /sends filters: from, campaign_id, until, free text q; combined; another tenant sees none', async (t) => {
  const s = await sender();
  const other = await sender();
  const first = await send(s, message(s, { to: 'ann@dest.example', subject: 'Invoice 100% paid' }));
  const second = await send(s, message(s, { to: 'bob@dest.example', subject: 'Welcome aboard', from_email: `News@${s.domain.name}` }));
  const [row] = await sql<{ created_at: Date }[]>`select created_at from sends where id = ${second.body.data.message_id}`;
  const cut = row!.created_at;
  const ids = async (query: string, token = s.key) => ((await call(app, 'GET', `/sends?${query}`, { token })).body.data as { id: string }[]).map((x) => x.id);
  const a = first.body.data.message_id as string;
  const b = second.body.data.message_id as string;

  t.same(await ids(`from=${encodeURIComponent(`NEWS@${s.domain.name}`)}`), [b], 'from: the From address, any case');
  t.same(await ids('q=invoice'), [a], 'q: a substring of the subject, any case');
  t.same(await ids('q=bob%40dest'), [b], 'q: of the recipient');
  t.same(await ids('q=100%25'), [a], 'q: % is the character itself, not a wildcard');
  t.same(await ids('q=1_0'), [], 'q: and so is _');
  t.same(await ids(`until=${cut.toISOString()}`), [a], 'until: accepted before');
  t.same(await ids(`since=${cut.toISOString()}&q=welcome`), [b], 'filters combine');
  t.same(await ids('campaign_id=0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b'), [], 'campaign_id: a transactional send is in no campaign');
  t.equal((await call(app, 'GET', '/sends?campaign_id=nope', { token: s.key })).status, 422, 'a campaign_id must be a UUID');
  const total = (await call(app, 'GET', '/sends?q=dest.example', { token: s.key })).body.total;
  t.equal(total, 2, 'total counts the filtered sends');
  t.same(await ids('q=invoice', other.key), [], "another tenant's sends never match");
  t.equal((await call(app, 'GET', `/sends/${a}`, { token: s.key })).body.data.campaign_id, null, 'a send names its campaign (none for a transactional one)');
});
