// POST /transactional/send with track_opens / track_clicks: the stored message carries the pixel and click links of its own send id, and hitting them records
// the send's events; without them the HTML is untouched.
import { simpleParser } from 'mailparser';
import t from 'tap';
import { buildTestApp, call, createKey, registerTenant } from '../../helpers/app.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { engagementEvents, HUMAN_UA } from '../../helpers/tracking.js';

const { app, ctx, sql } = await buildTestApp(t);
const tenant = await registerTenant(app);
const { key } = await createKey(app, tenant, { scopes: ['transactional:send'] });
const domain = await verifiedSendingDomain(sql, ctx.vault, tenant.tenantId);
const HTML = '<html><body><p>Your order</p><a href="https://shop.example/orders/42">View</a> <a href="mailto:help@shop.example">Help</a></body></html>';

async function send(over: Record<string, unknown>): Promise<{ id: string; html: string }> {
  const body = { to: 'reader@dest.example', from_email: `orders@${domain.name}`, subject: 'Receipt', body_html: HTML, ...over };
  const res = await call(app, 'POST', '/transactional/send', { token: key, body });
  if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
  const id = res.body.data.message_id as string;
  const [row] = await sql<{ message: Buffer }[]>`select message from sends where id = ${id}`;
  const parsed = await simpleParser(row!.message);
  return { id, html: typeof parsed.html === 'string' ? parsed.html : '' };
}

const pathOf = (html: string, re: RegExp) => {
  const match = re.exec(html);
  return match ? new URL(match[1]!.replace(/&amp;/g, '&')).pathname : undefined;
};

t.test('track_opens and track_clicks: the pixel and click links name the send; hits record its events', async (t) => {
  const { id, html } = await send({ track_opens: true, track_clicks: true });
  const open = pathOf(html, /<img src="([^"]+\/o\/[^"]+)" width="1" height="1" alt="">/);
  const click = pathOf(html, /href="([^"]+\/c\/[^"]+)"/);
  t.ok(open && click, html);
  t.match(html, /href="mailto:help@shop\.example"/, 'mailto untouched');
  const redirect = await app.inject({ method: 'GET', url: click!, headers: { 'user-agent': HUMAN_UA } });
  t.equal(redirect.statusCode, 302);
  t.equal(redirect.headers['location'], 'https://shop.example/orders/42');
  await app.inject({ method: 'GET', url: open!, headers: { 'user-agent': HUMAN_UA } });
  const events = await engagementEvents(sql, id);
  t.same(events.map((e) => e.type).sort(), ['click', 'open']);
  t.ok(events.every((e) => e.campaign_id === null && e.recipient === 'reader@dest.example'));
});

t.test('each flag alone; neither (the default) leaves the HTML as given', async (t) => {
  const opens = await send({ track_opens: true });
  t.match(opens.html, /\/o\//);
  t.notMatch(opens.html, /\/c\//);
  t.match(opens.html, /href="https:\/\/shop\.example\/orders\/42"/);
  const clicks = await send({ track_clicks: true });
  t.notMatch(clicks.html, /\/o\//);
  t.match(clicks.html, /\/c\//);
  const plain = await send({});
  t.notMatch(plain.html, /\/o\/|\/c\//);
  t.match(plain.html, /href="https:\/\/shop\.example\/orders\/42"/);
});

t.test('the flags are booleans', async (t) => {
  const res = await call(app, 'POST', '/transactional/send', {
    token: key,
    body: { to: 'reader@dest.example', from_email: `orders@${domain.name}`, subject: 'x', body_html: HTML, track_opens: 'yes' },
  });
  t.equal(res.status, 422);
  t.match(res.body.message, /track_opens/);
});
