// Campaign stats through the API: counters and rates from real hits on /o, /c and /u and from delivery events as the MTA writes them (without the campaign),
// countries, the 72-hour trend, kept counters (never recounted), stats-batch and its refusals, the event feed, the click heat map, scopes and tenant
// isolation.
import t from 'tap';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { insertEvents, type NewEvent } from '../../../shared/engagement/events/queries.js';
import { call, createKey, registerTenant } from '../../helpers/app.js';
import { campaignApp, createCampaign as createWithBody, listOf } from '../../helpers/campaigns.js';
import { assertForeign404 } from '../../helpers/isolation.js';
import { campaignSend, HUMAN_UA, markDelivered, type TrackedSendFixture } from '../../helpers/tracking.js';

const clock = new ManualClock(new Date('2026-05-04T10:30:00Z'));
const s = await campaignApp(t, { clock });
const { app, ctx, sql } = s;
const HOUR = 3_600_000;

const owner = await registerTenant(app);
const other = await registerTenant(app);
const lists = new Map<string, string>();
for (const tenant of [owner, other])
  lists.set(tenant.token, (await listOf(sql, tenant.tenantId, [`someone-${tenant.tenantId.slice(0, 8)}@dest.example`])).listId);
/** A draft of the tenant through the API, targeting its list. */
const createCampaign = (_: unknown, token: string, body: Record<string, unknown>) => createWithBody(s, token, { list_id: lists.get(token), ...body });

const hit = (url: string, o: { ua?: string; method?: 'GET' | 'POST' } = {}) => {
  clock.advance(1000);
  return app.inject({ method: o.method ?? 'GET', url, headers: { 'user-agent': o.ua ?? HUMAN_UA }, remoteAddress: '203.0.113.77' });
};

/** An event of the send as the MTA writes it: no campaign_id, no contact_id (the database names them). */
async function mtaEvent(f: TrackedSendFixture, type: NewEvent['type'], at: Date, subtype: string | null = null): Promise<void> {
  await insertEvents(sql, [{ tenant_id: f.tenantId, type, subtype, send_id: f.sendId, message_id: null, recipient: f.email, detail: {}, occurred_at: at }]);
}

async function delivered(f: TrackedSendFixture, at: Date): Promise<void> {
  await markDelivered(sql, f.sendId, at);
  await mtaEvent(f, 'delivered', at);
}

const get = (url: string, token = owner.token) => call(app, 'GET', url, { token });

// One campaign of three recipients: FR opens (twice) and clicks, DE is opened by Apple's proxy only and unsubscribes,
// the third (no country) hard-bounces; one complaint.
const fr = await campaignSend(ctx, { tenantId: owner.tenantId });
const campaignId = fr.campaignId!;
const de = await campaignSend(ctx, { tenantId: owner.tenantId, campaignId });
const none = await campaignSend(ctx, { tenantId: owner.tenantId, campaignId });
await sql`update contacts set country = 'FR' where id = ${fr.contactId}`;
await sql`update contacts set country = 'DE' where id = ${de.contactId}`;
const deliveredAt = new Date(clock.now().getTime() - 2 * HOUR);
await delivered(fr, deliveredAt);
await delivered(de, deliveredAt);
await mtaEvent(none, 'bounce', deliveredAt, 'hard');
await hit(fr.open);
await hit(fr.open);
await hit(de.open, { ua: 'Mozilla/5.0' }); // Apple Mail Privacy Protection
await hit(fr.clicks[0]!);
await hit(de.unsubscribe, { method: 'POST' });
await mtaEvent(de, 'complaint', clock.now());

t.test('stats: every counter and rate, with and without machine traffic, from real hits and delivery events', async (t) => {
  const res = await get(`/campaigns/${campaignId}/stats`);
  t.equal(res.status, 200);
  const stats = res.body.data;
  t.match(stats, {
    campaign_id: campaignId,
    campaign_name: 'Spring',
    status: 'sending',
    sent: 3,
    delivered: 2,
    deferred: 0,
    failed: 1,
    unique_opens: 2,
    unique_human_opens: 1,
    total_opens: 3,
    unique_clicks: 1,
    unique_human_clicks: 1,
    total_clicks: 1,
    unsubscribes: 1,
    bounces: 1,
    hard_bounces: 1,
    soft_bounces: 0,
    complaints: 1,
    open_rate: 1,
    human_open_rate: 0.5,
    click_rate: 0.5,
    click_to_open_rate: 0.5,
    human_click_to_open_rate: 1,
    bounce_rate: 0.3333,
    unsubscribe_rate: 0.5,
    complaint_rate: 0.5,
  });
  t.same(stats.countries, [
    { country: 'FR', unique_opens: 1, unique_human_opens: 1, unique_clicks: 1, unique_human_clicks: 1 },
    { country: 'DE', unique_opens: 1, unique_human_opens: 0, unique_clicks: 0, unique_human_clicks: 0 },
  ]);
  t.equal(stats.hourly_trend.length, 72, '72 hours');
  t.equal(stats.hourly_trend[71].hour, '2026-05-04T10:00:00.000Z', 'the current hour last');
  t.equal(stats.hourly_trend[0].hour, '2026-05-01T11:00:00.000Z');
  t.same(stats.hourly_trend[71], { hour: '2026-05-04T10:00:00.000Z', delivered: 0, opens: 3, clicks: 1, unsubscribes: 1, bounces: 0, complaints: 1 });
  t.same(stats.hourly_trend[69], { hour: '2026-05-04T08:00:00.000Z', delivered: 2, opens: 0, clicks: 0, unsubscribes: 0, bounces: 1, complaints: 0 });
  t.equal(stats.hourly_trend.filter((h: any) => h.opens + h.delivered + h.bounces === 0).length, 70, 'empty hours are zeros');

  const [row] = await sql`select count(*)::int as n from events where campaign_id = ${campaignId} and type in ('delivered', 'bounce', 'complaint')`;
  t.equal(row!['n'], 4, 'the delivery events written without a campaign are named with it');
});

t.test('the counters are kept, not recounted: stats survive the events being gone', async (t) => {
  const before = (await get(`/campaigns/${campaignId}/stats`)).body.data;
  const copy = await sql`select * from events where campaign_id = ${campaignId}`;
  await sql`delete from events where campaign_id = ${campaignId}`;
  const after = (await get(`/campaigns/${campaignId}/stats`)).body.data;
  t.same(after, before);
  // Put them back (without the triggers counting them again) for the feed's tests.
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`insert into events ${tx(copy as never)}`;
  });
});

t.test("countries follow the recipient's first clicks: a scanner burst takes its human click back there too", async (t) => {
  const it = await campaignSend(ctx, { tenantId: owner.tenantId });
  await sql`update contacts set country = 'IT' where id = ${it.contactId}`;
  await delivered(it, new Date(clock.now().getTime() - HOUR));
  const country = async () => (await get(`/campaigns/${it.campaignId}/stats`)).body.data.countries;
  await hit(it.clicks[0]!);
  t.same(await country(), [{ country: 'IT', unique_opens: 0, unique_human_opens: 0, unique_clicks: 1, unique_human_clicks: 1 }], 'one click looks human');
  await hit(it.clicks[1]!);
  await hit(it.clicks[2]!);
  t.same(
    await country(),
    [{ country: 'IT', unique_opens: 0, unique_human_opens: 0, unique_clicks: 1, unique_human_clicks: 0 }],
    'every link at once: a scanner',
  );
  t.match((await get(`/campaigns/${it.campaignId}/stats`)).body.data, {
    unique_clicks: 1,
    unique_human_clicks: 0,
    total_clicks: 3,
    click_rate: 1,
    human_click_rate: 0,
  });
});

t.test('a campaign without events has zero counts and rates, and a full trend of zeros', async (t) => {
  const fresh = await createCampaign(s, owner.token, { name: 'Fresh' });
  const stats = (await get(`/campaigns/${fresh.id}/stats`)).body.data;
  t.match(stats, { sent: 0, delivered: 0, unique_opens: 0, open_rate: 0, click_to_open_rate: 0, bounce_rate: 0, status: 'draft', campaign_name: 'Fresh' });
  t.same(stats.countries, []);
  t.equal(stats.hourly_trend.length, 72);
});

t.test("stats-batch: the caller's campaigns among the ids, zeros for those without events, others absent", async (t) => {
  const fresh = await createCampaign(s, owner.token, { name: 'Quiet' });
  const foreign = await createCampaign(s, other.token, { name: 'Not yours' });
  const unknown = '00000000-0000-4000-8000-000000000000';
  const res = await get(`/campaigns/stats-batch?ids=${campaignId},${fresh.id.toUpperCase()},${foreign.id},${unknown},${campaignId}`);
  t.equal(res.status, 200);
  const items = res.body.data.items;
  t.same(items.map((i: any) => i.campaign_id).sort(), [campaignId, fresh.id].sort(), 'unknown and foreign ids absent, repeats once');
  t.match(
    items.find((i: any) => i.campaign_id === campaignId),
    { sent: 3, unique_opens: 2, unique_clicks: 1, unsubscribes: 1, bounces: 1, complaints: 1, open_rate: 1, bounce_rate: 0.3333 },
  );
  t.match(
    items.find((i: any) => i.campaign_id === fresh.id),
    { campaign_name: 'Quiet', sent: 0, unique_opens: 0, unique_clicks: 0, unsubscribes: 0, bounces: 0, complaints: 0, open_rate: 0 },
  );
  t.same((await get(`/campaigns/stats-batch?ids=${foreign.id}`)).body.data.items, [], "another tenant's campaign only: nothing");

  const many = Array.from({ length: 500 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  t.equal((await get(`/campaigns/stats-batch?ids=${many.join(',')}`)).status, 200, '500 ids');
  for (const [what, query] of [
    ['no ids', ''],
    ['an empty ids', '?ids='],
    ['blank', '?ids=%20'],
    ['not an id', '?ids=abc'],
    ['a trailing comma', `?ids=${campaignId},`],
    ['two commas', `?ids=${campaignId},,${fresh.id}`],
    ['501 ids', `?ids=${[...many, campaignId].join(',')}`],
  ] as const) {
    const bad = await get(`/campaigns/stats-batch${query}`);
    t.same([bad.status, bad.body.error], [400, 'bad_request'], what);
  }
});

/** One GET over a real socket (Node's parser and its head limit included, which app.inject skips); 10 s at most. */
function socketGet(port: number, path: string, token: string): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${token}` }, timeout: 10_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end();
  });
}

t.test('stats-batch over a real socket: 500 ids fit the request line (commas plain or %2C), 501 are 400, not 431', async (t) => {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const others = Array.from({ length: 499 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  for (const [what, comma] of [
    ['plain commas', ','],
    ['percent-encoded commas', '%2C'],
  ] as const) {
    const ok = await socketGet(port, `/api/v1/campaigns/stats-batch?ids=${[...others, campaignId].join(comma)}`, owner.token);
    t.equal(ok.status, 200, `500 ids, ${what}: 200`);
    t.same(
      ok.body.data.items.map((i: any) => i.campaign_id),
      [campaignId],
      `500 ids, ${what}: the known one answered`,
    );
    const over = await socketGet(
      port,
      `/api/v1/campaigns/stats-batch?ids=${[...others, campaignId, '00000000-0000-4000-8000-999999999999'].join(comma)}`,
      owner.token,
    );
    t.same([over.status, over.body.error], [400, 'bad_request'], `501 ids, ${what}: 400 from the route, not 431 from the listener`);
  }
});

t.test("events: the campaign's feed newest first, delivery events included, filters and cursor pages", async (t) => {
  const all = (await get(`/campaigns/${campaignId}/events?limit=200`)).body.data;
  t.equal(all.next_cursor, null);
  const types = all.items.map((e: any) => e.type);
  t.same([...types].sort(), ['bounce', 'click', 'complaint', 'delivered', 'delivered', 'open', 'open', 'open', 'send', 'send', 'send', 'unsubscribe'].sort());
  const times = all.items.map((e: any) => Date.parse(e.occurred_at));
  t.same(
    times,
    [...times].sort((a: number, b: number) => b - a),
    'newest first',
  );
  t.match(
    all.items.find((e: any) => e.type === 'delivered'),
    { contact_id: /^[0-9a-f-]{36}$/, message_id: /^[0-9a-f-]{36}$/ },
  );

  const opens = (await get(`/campaigns/${campaignId}/events?type=open`)).body.data.items;
  t.equal(opens.length, 3);
  t.same(new Set(opens.map((e: any) => e.detail.machine)), new Set([true, false]));
  t.equal((await get(`/campaigns/${campaignId}/events?recipient=${encodeURIComponent(fr.email.toUpperCase())}&type=open`)).body.data.items.length, 2);
  t.equal(
    (await get(`/campaigns/${campaignId}/events?since=${encodeURIComponent(new Date(clock.now().getTime() - HOUR).toISOString())}`)).body.data.items.length,
    all.items.length - 3,
    'since: not the events of two hours ago',
  );

  const seen: string[] = [];
  let after: string | null = null;
  for (let page = 0; page < 20; page++) {
    const res: any = await get(`/campaigns/${campaignId}/events?limit=5${after ? `&after=${after}` : ''}`);
    seen.push(...res.body.data.items.map((e: any) => e.id));
    after = res.body.data.next_cursor;
    if (!after) break;
  }
  t.same(
    seen,
    all.items.map((e: any) => e.id),
    'pages of 5 walk the same feed',
  );
  t.same((await get(`/campaigns/${campaignId}/events?after=nonsense`)).body.error, 'bad_request');
  t.equal((await get(`/campaigns/${campaignId}/events?limit=201`)).status, 422);
});

t.test('click heat map: URLs by clicks, pct_of_total over the returned set, at most 100', async (t) => {
  const one = (await get(`/campaigns/${campaignId}/click-heatmap`)).body.data;
  t.same(one, { campaign_id: campaignId, total_clicks: 1, by_url: [{ url: 'https://shop.example/sale?id=1', clicks: 1, pct_of_total: 100 }] });

  await hit(fr.clicks[0]!);
  await hit(fr.clicks[1]!);
  clock.advance(HOUR);
  await hit(de.clicks[0]!);
  const map = (await get(`/campaigns/${campaignId}/click-heatmap`)).body.data;
  t.same(map, {
    campaign_id: campaignId,
    total_clicks: 4,
    by_url: [
      { url: 'https://shop.example/sale?id=1', clicks: 3, pct_of_total: 75 },
      { url: 'https://blog.example/post#top', clicks: 1, pct_of_total: 25 },
    ],
  });

  // 105 more URLs, clicked 2..106 times (written as the recorder writes click events): the 100 most clicked remain.
  const events: NewEvent[] = [];
  for (let i = 1; i <= 105; i++) {
    for (let n = 0; n <= i; n++) {
      events.push({
        tenant_id: fr.tenantId,
        type: 'click',
        subtype: null,
        send_id: fr.sendId,
        message_id: null,
        recipient: fr.email,
        detail: { url: `https://x.example/${i}` },
        occurred_at: clock.now(),
        campaign_id: campaignId,
        contact_id: fr.contactId,
      });
    }
  }
  await insertEvents(sql, events);
  const top = (await get(`/campaigns/${campaignId}/click-heatmap`)).body.data;
  t.equal(top.by_url.length, 100);
  t.same(top.by_url[0], { url: 'https://x.example/105', clicks: 106, pct_of_total: Math.round((106 / top.total_clicks) * 10_000) / 100 });
  t.equal(top.by_url[99].url, 'https://x.example/6');
  t.equal(
    top.total_clicks,
    top.by_url.reduce((sum: number, u: any) => sum + u.clicks, 0),
    'total over the returned set',
  );
  const pct = top.by_url.reduce((sum: number, u: any) => sum + u.pct_of_total, 0);
  t.ok(Math.abs(pct - 100) < 0.1, `the shares add up to 100 (${pct})`);
});

t.test('scopes: campaigns:read for the reads', async (t) => {
  const reader = await createKey(app, owner, { scopes: ['campaigns:read'] });
  const writer = await createKey(app, owner, { scopes: ['campaigns:write'] });
  for (const url of [
    `/campaigns/${campaignId}/stats`,
    `/campaigns/stats-batch?ids=${campaignId}`,
    `/campaigns/${campaignId}/events`,
    `/campaigns/${campaignId}/click-heatmap`,
    `/campaigns/${campaignId}/ab-results`,
  ]) {
    t.equal((await get(url, reader.key)).status, 200, `GET ${url} with campaigns:read`);
    const res = await get(url, writer.key);
    t.same([res.status, res.body.error], [403, 'invalid_scope'], `GET ${url} needs campaigns:read`);
  }
  const res = await call(app, 'POST', `/campaigns/${campaignId}/ab/finalize`, { token: reader.key, body: { winner: 'a' } });
  t.same([res.status, res.body.error], [403, 'invalid_scope'], 'finalize needs campaigns:write');
});

t.test("another tenant's campaign is 404 on every route, a malformed id too", async (t) => {
  await assertForeign404(t, app, other.token, [
    { method: 'GET', url: `/campaigns/${campaignId}/stats` },
    { method: 'GET', url: `/campaigns/${campaignId}/events` },
    { method: 'GET', url: `/campaigns/${campaignId}/click-heatmap` },
    { method: 'GET', url: `/campaigns/${campaignId}/ab-results` },
    { method: 'POST', url: `/campaigns/${campaignId}/ab/finalize`, body: { winner: 'a' } },
  ]);
  const key = await createKey(app, other, { scopes: ['campaigns:read'] });
  t.equal((await get(`/campaigns/${campaignId}/stats`, key.key)).status, 404, 'with an API key too');
  t.equal((await get('/campaigns/not-an-id/stats')).status, 404);
});
