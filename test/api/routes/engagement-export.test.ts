// The engagement CSV: exact columns, real opens and clicks through /o and /c beside delivery events, oldest first, the since window and its 90-day cap,
// CSV-injection escaping, many cursor pages, both scopes for keys, tenant isolation.
import { randomUUID } from 'node:crypto';
import { parse } from 'csv-parse/sync';
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { CURSOR_ROWS } from '../../../shared/campaigns/engagement-export/queries.js';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { assertForeign404 } from '../../helpers/isolation.js';
import { campaignSend, HUMAN_UA, markDelivered, type TrackedSendFixture } from '../../helpers/tracking.js';

const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
const s = await buildTestApp(t, { clock });
const { app, ctx, sql } = s;
const owner = await registerTenant(app);
const other = await registerTenant(app);
const HEADER = 'time,event_type,contact_email,contact_id,sequence_step,user_agent,ip_truncated,bounce_subtype';
const DAY = 86_400_000;

const hit = (path: string, ua = HUMAN_UA, ip = '203.0.113.77') => {
  clock.advance(60_000);
  return app.inject({ method: 'GET', url: path, headers: { 'user-agent': ua }, remoteAddress: ip });
};
const csv = (campaignId: string, o: { token?: string; since?: string } = {}) =>
  app.inject({
    method: 'GET',
    url: `/api/v1/campaigns/${campaignId}/engagement.csv${o.since ? `?since=${encodeURIComponent(o.since)}` : ''}`,
    headers: { authorization: `Bearer ${o.token ?? owner.token}` },
  });
const rowsOf = (text: string) => parse(text, { columns: true }) as Record<string, string>[];

/** A delivery-side event of the send (what the MTA writes), at `at`. */
async function event(f: TrackedSendFixture, type: string, at: Date, subtype: string | null = null) {
  await sql`
    insert into events (id, tenant_id, type, subtype, send_id, message_id, recipient, detail, occurred_at, campaign_id, contact_id)
    values (${randomUUID()}, ${f.tenantId}, ${type}, ${subtype}, ${f.sendId}, 'm@x', ${f.email}, '{}', ${at}, ${f.campaignId}, ${f.contactId})`;
}

t.test('columns exactly, every event type in time order, opens and clicks from real hits', async (t) => {
  const f = await campaignSend(ctx, { tenantId: owner.tenantId });
  const g = await campaignSend(ctx, { tenantId: owner.tenantId, campaignId: f.campaignId! });
  await markDelivered(sql, f.sendId, new Date(clock.now().getTime() - 3_600_000));
  await event(f, 'delivered', new Date(clock.now().getTime() - 3_600_000));
  await event(g, 'bounce', new Date(clock.now().getTime() - 1_800_000), 'hard');
  await hit(f.open);
  await hit(f.clicks[0]!, HUMAN_UA, '2001:db8:85a3:1234::1');
  await event(f, 'complaint', new Date(clock.now().getTime() + 1000));
  clock.advance(2000);

  const res = await csv(f.campaignId!);
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /^text\/csv/);
  t.match(res.headers['content-disposition'], new RegExp(`campaign-${f.campaignId}-engagement\\.csv`));
  t.equal(res.body.split('\r\n')[0], HEADER);
  const rows = rowsOf(res.body);
  // The send events are the send path's own (written when each send was accepted, at the same instant).
  t.same(
    rows.map((r) => r['event_type']),
    ['delivered', 'bounce', 'send', 'send', 'open', 'click', 'complaint'],
  );
  t.same(
    rows.map((r) => r['time']),
    [...rows.map((r) => r['time'])].sort(),
    'oldest first',
  );
  t.match(rows[0], { contact_email: f.email, contact_id: f.contactId, sequence_step: '', user_agent: '', ip_truncated: '', bounce_subtype: '' });
  t.match(rows[1], { contact_email: g.email, contact_id: g.contactId, bounce_subtype: 'hard' });
  t.same(new Set([rows[2]!['contact_id'], rows[3]!['contact_id']]), new Set([f.contactId, g.contactId]));
  t.match(rows[4], { contact_email: f.email, user_agent: HUMAN_UA, ip_truncated: '203.0.113.0', bounce_subtype: '' });
  t.match(rows[5], { user_agent: HUMAN_UA, ip_truncated: '2001:db8:85a3::' });
  t.equal(rows[4]!['time'], new Date(rows[4]!['time']!).toISOString(), 'RFC 3339 UTC');
});

t.test('since: the window starts there; default and cap 90 days, beyond is 422', async (t) => {
  const f = await campaignSend(ctx, { tenantId: owner.tenantId });
  const now = clock.now().getTime();
  await event(f, 'send', new Date(now - 100 * DAY));
  await event(f, 'send', new Date(now - 89 * DAY));
  await event(f, 'delivered', new Date(now - 2 * DAY));
  const all = rowsOf((await csv(f.campaignId!)).body);
  // The last send event is the send path's own, at acceptance (now).
  t.same(
    all.map((r) => r['event_type']),
    ['send', 'delivered', 'send'],
    'the default window is the last 90 days',
  );
  const recent = rowsOf((await csv(f.campaignId!, { since: new Date(now - 3 * DAY).toISOString() })).body);
  t.same(
    recent.map((r) => r['event_type']),
    ['delivered', 'send'],
  );
  const offset = rowsOf((await csv(f.campaignId!, { since: '2026-05-01T12:00:00+02:00' })).body);
  t.same(
    offset.map((r) => r['event_type']),
    ['delivered', 'send'],
    'an offset is accepted',
  );
  const future = await csv(f.campaignId!, { since: new Date(now + DAY).toISOString() });
  t.equal(future.body, `${HEADER}\r\n`, 'nothing yet: the header alone');

  const tooFar = await csv(f.campaignId!, { since: new Date(now - 91 * DAY).toISOString() });
  t.equal(tooFar.statusCode, 422);
  t.equal(tooFar.json().error, 'validation_error');
  t.match(tooFar.json().message, /since/);
  const bad = await csv(f.campaignId!, { since: 'yesterday' });
  t.equal(bad.statusCode, 422);
});

t.test("CSV injection: cells starting with = + - @ are prefixed with ', quotes and commas are quoted", async (t) => {
  const f = await campaignSend(ctx, { tenantId: owner.tenantId });
  await markDelivered(sql, f.sendId, new Date(clock.now().getTime() - 3_600_000));
  const agents = ['=HYPERLINK("http://evil.example","x")', '+SUM(1,2)', '-2+3', '@cmd', 'Mozilla "quoted", with comma'];
  for (const ua of agents) await hit(f.open, ua);
  const res = await csv(f.campaignId!);
  const uas = rowsOf(res.body)
    .filter((r) => r['event_type'] === 'open')
    .map((r) => r['user_agent']);
  t.same(uas, ['\'=HYPERLINK("http://evil.example","x")', "'+SUM(1,2)", "'-2+3", "'@cmd", 'Mozilla "quoted", with comma']);
  t.match(res.body, /\r\n[^\r\n]*,"'=HYPERLINK\(""http:\/\/evil\.example"",""x""\)",/, 'quoted with doubled quotes');
});

t.test('many cursor pages: every event once, in order', async (t) => {
  const f = await campaignSend(ctx, { tenantId: owner.tenantId });
  const n = CURSOR_ROWS * 2 + 7;
  const start = clock.now().getTime() - DAY;
  await sql`
    insert into events (id, tenant_id, type, send_id, message_id, recipient, detail, occurred_at, campaign_id, contact_id)
    select gen_random_uuid(), ${f.tenantId}, 'open', ${f.sendId}, 'm@x', ${f.email}, jsonb_build_object('user_agent', 'ua-' || i, 'ip', '198.51.100.0'),
      ${new Date(start)}::timestamptz + i * interval '1 second', ${f.campaignId}, ${f.contactId}
    from generate_series(1, ${n}) as i`;
  const rows = rowsOf((await csv(f.campaignId!)).body).filter((r) => r['event_type'] === 'open');
  t.equal(rows.length, n);
  t.same(
    rows.map((r) => r['user_agent']),
    Array.from({ length: n }, (_, i) => `ua-${i + 1}`),
  );
});

t.test('scopes: API keys need campaigns:read and audit:export; a session needs neither', async (t) => {
  const f = await campaignSend(ctx, { tenantId: owner.tenantId });
  const both = await createKey(app, owner, { scopes: ['campaigns:read', 'audit:export'] });
  const readOnly = await createKey(app, owner, { scopes: ['campaigns:read'] });
  const exportOnly = await createKey(app, owner, { scopes: ['audit:export'] });
  const every = await createKey(app, owner);
  t.equal((await csv(f.campaignId!, { token: both.key })).statusCode, 200);
  t.equal((await csv(f.campaignId!, { token: every.key })).statusCode, 200, 'an unrestricted key');
  t.equal((await csv(f.campaignId!)).statusCode, 200, "the owner's session");
  for (const key of [readOnly.key, exportOnly.key]) {
    const res = await csv(f.campaignId!, { token: key });
    t.equal(res.statusCode, 403);
    t.equal(res.json().error, 'invalid_scope');
  }
});

t.test("isolation: another tenant's campaign is 404, with a session or a key", async (t) => {
  const f = await campaignSend(ctx, { tenantId: owner.tenantId });
  const otherKey = await createKey(app, other, { scopes: ['campaigns:read', 'audit:export'] });
  for (const credential of [other.token, otherKey.key]) {
    await assertForeign404(t, app, credential, [{ method: 'GET', url: `/campaigns/${f.campaignId}/engagement.csv` }]);
  }
  t.equal((await call(app, 'GET', `/campaigns/${randomUUID()}/engagement.csv`, { token: owner.token })).status, 404);
});
