// The public open pixel and click redirect: events with truncated addresses and machine/scanner flags, unique counts with and without machine traffic, no
// open redirect, HEAD not counted, tokens kept out of logs, tenant isolation.
import { Writable } from 'node:stream';
import t from 'tap';
import { ManualClock } from '../../../shared/kernel/clock.js';
import { createLogger } from '../../../shared/kernel/log.js';
import { buildTestApp } from '../../helpers/app.js';
import { campaignSend, campaignStats, engagementEvents, HUMAN_UA, markDelivered, plainSend, BODY } from '../../helpers/tracking.js';

const clock = new ManualClock(new Date('2026-05-04T10:00:00Z'));
const lines: string[] = [];
const log = createLogger(
  'info',
  new Writable({
    write: (chunk, _e, done) => {
      lines.push(String(chunk));
      done();
    },
  }),
);
const s = await buildTestApp(t, { clock, log });
const { app, ctx, sql } = s;

const hit = (url: string, o: { ua?: string; ip?: string; method?: 'GET' | 'HEAD' } = {}) => {
  clock.advance(1000);
  return app.inject({ method: o.method ?? 'GET', url, headers: { 'user-agent': o.ua ?? HUMAN_UA }, remoteAddress: o.ip ?? '203.0.113.77' });
};
const HOUR = 3_600_000;
const delivered = async (sendId: string, ago = HOUR) => markDelivered(sql, sendId, new Date(clock.now().getTime() - ago));

t.test('the pixel: a 1×1 GIF nobody caches, and an open event naming campaign and contact with a truncated address', async (t) => {
  const f = await campaignSend(ctx);
  await delivered(f.sendId);
  const res = await hit(f.open);
  t.equal(res.statusCode, 200);
  t.equal(res.headers['content-type'], 'image/gif');
  t.match(res.headers['cache-control'], /no-store/);
  t.equal(res.rawPayload.subarray(0, 6).toString(), 'GIF89a');
  t.equal(res.rawPayload.length, 42);
  t.ok(res.headers['x-ratelimit-limit'], 'counted against the client address');
  const [event] = await engagementEvents(sql, f.sendId, 'open');
  t.same(event, {
    type: 'open',
    campaign_id: f.campaignId,
    contact_id: f.contactId,
    recipient: f.email,
    detail: { user_agent: HUMAN_UA, ip: '203.0.113.0', machine: false, reasons: [] },
  });
  await hit(f.open, { ip: '2001:db8:85a3:1234:5678:8a2e:370:7334' });
  const events = await engagementEvents(sql, f.sendId, 'open');
  t.equal(events[1]!.detail['ip'], '2001:db8:85a3::', 'IPv6 to its /48');
  const [stamps] = await sql`select first_open_at, first_human_open_at from campaign_recipients where send_id = ${f.sendId}`;
  t.ok(stamps!['first_open_at'] && stamps!['first_human_open_at']);
  t.match(await campaignStats(sql, f.campaignId!), { total_opens: 2, unique_opens: 1, unique_human_opens: 1 });
});

t.test('machine opens are flagged and counted apart: unique opens with and without them', async (t) => {
  const f = await campaignSend(ctx);
  await delivered(f.sendId, 20_000);
  await hit(f.open, { ua: 'Mozilla/5.0' }); // Apple Mail Privacy Protection's proxy
  await hit(f.open, { ua: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' }); // a prefetch
  await hit(f.open, { ua: 'curl/8.5.0' });
  t.match(await campaignStats(sql, f.campaignId!), { total_opens: 3, unique_opens: 1, unique_human_opens: 0 }, 'opened, by machines only');
  const events = await engagementEvents(sql, f.sendId, 'open');
  t.same(
    events.map((e) => [e.detail['machine'], e.detail['reasons']]),
    [
      [true, ['machine_user_agent']],
      [true, ['proxy_prefetch']],
      [true, ['bot']],
    ],
  );
  clock.advance(HOUR);
  await hit(f.open, { ua: 'Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)' });
  t.match(
    await campaignStats(sql, f.campaignId!),
    { total_opens: 4, unique_opens: 1, unique_human_opens: 1 },
    'the proxy fetching later is the person reading',
  );

  const other = await campaignSend(ctx, { tenantId: f.tenantId, campaignId: f.campaignId! });
  await delivered(other.sendId);
  await hit(other.open);
  t.match(await campaignStats(sql, f.campaignId!), { total_opens: 5, unique_opens: 2, unique_human_opens: 2 }, 'a second recipient');
});

t.test('a click: 302 to the signed destination, an event with its URL, and the counters', async (t) => {
  const f = await campaignSend(ctx, { utm: { source: 'news', medium: 'email', campaign: 'spring' } });
  await delivered(f.sendId);
  t.equal(f.clicks.length, 3);
  const res = await hit(f.clicks[0]!);
  t.equal(res.statusCode, 302);
  t.equal(res.headers['location'], 'https://shop.example/sale?id=1&utm_source=news&utm_medium=email&utm_campaign=spring');
  t.equal(res.headers['cache-control'], 'no-store');
  const second = await hit(f.clicks[1]!);
  t.equal(second.headers['location'], 'https://blog.example/post?utm_source=news&utm_medium=email&utm_campaign=spring#top', 'the fragment after the query');
  clock.advance(HOUR);
  await hit(f.clicks[0]!);
  const events = await engagementEvents(sql, f.sendId, 'click');
  t.same(events[0], {
    type: 'click',
    campaign_id: f.campaignId,
    contact_id: f.contactId,
    recipient: f.email,
    detail: {
      user_agent: HUMAN_UA,
      ip: '203.0.113.0',
      url: 'https://shop.example/sale?id=1&utm_source=news&utm_medium=email&utm_campaign=spring',
      scanner: false,
      reasons: [],
    },
  });
  t.match(await campaignStats(sql, f.campaignId!), { total_clicks: 3, unique_clicks: 1, unique_human_clicks: 1 });
});

t.test('scanner clicks: a known scanner, a click seconds after delivery, every link at once', async (t) => {
  const soon = await campaignSend(ctx);
  await markDelivered(sql, soon.sendId, clock.now());
  await hit(soon.clicks[0]!); // 1 s after delivery
  t.same((await engagementEvents(sql, soon.sendId, 'click'))[0]!.detail['reasons'], ['soon_after_delivery']);
  clock.advance(60_000);
  await hit(soon.clicks[1]!, { ua: 'Mozilla/5.0 (compatible; Mimecast)' });
  t.same((await engagementEvents(sql, soon.sendId, 'click'))[1]!.detail['reasons'], ['scanner_user_agent']);
  t.match(await campaignStats(sql, soon.campaignId!), { total_clicks: 2, unique_clicks: 1, unique_human_clicks: 0 });

  // Each click looks human, but all three links within seconds: the burst is a scanner's, the earlier clicks too.
  const burst = await campaignSend(ctx);
  await delivered(burst.sendId);
  await hit(burst.clicks[0]!);
  t.match(await campaignStats(sql, burst.campaignId!), { unique_clicks: 1, unique_human_clicks: 1 }, 'one click looks like a person');
  await hit(burst.clicks[1]!);
  await hit(burst.clicks[2]!);
  const flagged = await engagementEvents(sql, burst.sendId, 'click');
  t.same(
    flagged.map((e) => [e.detail['scanner'], e.detail['reasons']]),
    [
      [true, ['all_links']],
      [true, ['all_links']],
      [true, ['all_links']],
    ],
  );
  t.match(await campaignStats(sql, burst.campaignId!), { total_clicks: 3, unique_clicks: 1, unique_human_clicks: 0 }, 'the human click is taken back');
  const [stamps] = await sql`select first_click_at, first_human_click_at from campaign_recipients where send_id = ${burst.sendId}`;
  t.ok(stamps!['first_click_at']);
  t.equal(stamps!['first_human_click_at'], null);
  clock.advance(HOUR);
  await hit(burst.clicks[1]!);
  t.match(await campaignStats(sql, burst.campaignId!), { total_clicks: 4, unique_clicks: 1, unique_human_clicks: 1 }, 'the person clicking later counts');

  // The same clicks spread over minutes are a person's.
  const slow = await campaignSend(ctx);
  await delivered(slow.sendId);
  for (const link of slow.clicks) {
    clock.advance(60_000);
    await hit(link);
  }
  t.ok((await engagementEvents(sql, slow.sendId, 'click')).every((e) => e.detail['scanner'] === false));
});

t.test('concurrent clicks, in one commit or several, are judged as a whole: every link at once', async (t) => {
  const f = await campaignSend(ctx);
  await delivered(f.sendId);
  clock.advance(1000);
  const answers = await Promise.all(
    f.clicks.map((url) => app.inject({ method: 'GET', url, headers: { 'user-agent': HUMAN_UA }, remoteAddress: '198.51.100.9' })),
  );
  t.same(
    answers.map((a) => a.statusCode),
    [302, 302, 302],
  );
  const events = await engagementEvents(sql, f.sendId, 'click');
  t.equal(events.length, 3);
  t.ok(
    events.every((e) => e.detail['scanner'] === true),
    'all flagged',
  );
  t.match(await campaignStats(sql, f.campaignId!), { total_clicks: 3, unique_clicks: 1, unique_human_clicks: 0 });
});

t.test('no open redirect: a bad, tampered or misplaced token gets a 404 page and records nothing', async (t) => {
  const f = await campaignSend(ctx);
  const token = f.clicks[0]!.slice('/c/'.length);
  const [payload, mac] = token.split('.') as [string, string];
  const evil = Buffer.concat([Buffer.from(payload, 'base64url').subarray(0, 18), Buffer.from('https://evil.example/')]).toString('base64url');
  for (const url of [`/c/${evil}.${mac}`, '/c/garbage', '/c/', `/c/${f.open.slice(3)}`, `/c/${token}x`]) {
    const res = await hit(url);
    t.equal(res.statusCode, 404, url.slice(0, 30));
    t.equal(res.headers['location'], undefined);
    t.match(res.headers['content-type'], /text\/html/);
    t.match(res.body, /This link does not work/);
  }
  const pixel = await hit(`/o/${token}`);
  t.equal(pixel.statusCode, 404, 'a click token is no pixel');
  t.equal(pixel.headers['content-type'], 'image/gif', 'an image all the same');
  t.equal((await engagementEvents(sql, f.sendId)).length, 0);
});

t.test('HEAD requests (link checkers) are answered but not counted', async (t) => {
  const f = await campaignSend(ctx);
  t.equal((await hit(f.clicks[0]!, { method: 'HEAD' })).statusCode, 302);
  t.equal((await hit(f.open, { method: 'HEAD' })).statusCode, 200);
  t.equal((await engagementEvents(sql, f.sendId)).length, 0);
});

t.test('a long link: the token holds its URL, longer than a route parameter may be', async (t) => {
  const long = `https://shop.example/${'x'.repeat(1500)}?q=${'y'.repeat(500)}`;
  const f = await campaignSend(ctx, { body: `<a href="${long}">x</a>` });
  const res = await hit(f.clicks[0]!);
  t.equal(res.statusCode, 302);
  t.equal(res.headers['location'], long);
});

t.test('a non-ASCII destination is sent percent-encoded', async (t) => {
  const f = await campaignSend(ctx, { body: '<a href="https://shop.example/café?q=ü">x</a>' });
  t.equal((await hit(f.clicks[0]!)).headers['location'], 'https://shop.example/caf%C3%A9?q=%C3%BC');
});

t.test('transactional sends: events without campaign, nothing counted for any campaign', async (t) => {
  const f = await plainSend(ctx);
  await delivered(f.sendId);
  await hit(f.open);
  await hit(f.clicks[0]!);
  const events = await engagementEvents(sql, f.sendId);
  t.same(
    events.map((e) => [e.type, e.campaign_id, e.contact_id]),
    [
      ['open', null, null],
      ['click', null, null],
    ],
  );
});

t.test("isolation: a send's tokens only ever touch that send and its campaign", async (t) => {
  const a = await campaignSend(ctx, { email: 'same@dest.example' });
  const b = await campaignSend(ctx, { email: 'same@dest.example' });
  await delivered(a.sendId);
  await delivered(b.sendId);
  await hit(a.open);
  await hit(a.clicks[0]!);
  t.equal((await engagementEvents(sql, a.sendId)).length, 2);
  t.equal((await engagementEvents(sql, b.sendId)).length, 0, "the other tenant's send of the same address");
  t.match(await campaignStats(sql, b.campaignId!), { total_opens: 0, total_clicks: 0 });
  const [row] = await sql`select count(*)::int as n from events where tenant_id = ${b.tenantId} and type in ('open', 'click')`;
  t.equal(row!['n'], 0);
});

t.test('A/B variants count in their own row', async (t) => {
  const f = await campaignSend(ctx, { variant: 'b' });
  await delivered(f.sendId);
  await hit(f.open);
  t.match(await campaignStats(sql, f.campaignId!, 'b'), { total_opens: 1, unique_opens: 1 });
  t.match(await campaignStats(sql, f.campaignId!, ''), { total_opens: 0 });
});

t.test('the request log never holds a tracking token', async (t) => {
  const f = await campaignSend(ctx, { body: BODY });
  await hit(f.open);
  await hit(f.clicks[0]!);
  const token = f.clicks[0]!.slice(3);
  const logged = lines.filter((l) => l.includes('"api request"') || l.includes('api request'));
  t.ok(
    logged.some((l) => l.includes('"/c/[redacted]"')),
    'the path is logged without its token',
  );
  t.notOk(
    lines.some((l) => l.includes(token) || l.includes(f.open.slice(3))),
    'no line holds a token',
  );
});
