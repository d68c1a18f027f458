// The unsubscribe link over real HTTP: RFC 8058 one-click POST (urlencoded and multipart, no login, idempotent), the confirmation page and its button, sends
// without a contact (a suppression), broken links, tenant isolation.
import t from 'tap';
import { buildTestApp } from '../../helpers/app.js';
import { campaignSend, campaignStats, engagementEvents, plainSend } from '../../helpers/tracking.js';

const s = await buildTestApp(t);
const { app, ctx, sql } = s;
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;

const oneClick = (
  path: string,
  body: string | FormData = 'List-Unsubscribe=One-Click',
  headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' },
) =>
  fetch(origin + path, { method: 'POST', body, headers: { 'user-agent': 'Mozilla/5.0 (compatible; GoogleMailUnsubscribe)', ...headers }, redirect: 'manual' });

const contactOf = async (id: string) =>
  (await sql<{ status: string; unsubscribed_at: Date | null }[]>`select status, unsubscribed_at from contacts where id = ${id}`)[0]!;

t.test('one-click POST: the contact is unsubscribed, one event, one count; a second POST changes nothing', async (t) => {
  const f = await campaignSend(ctx);
  const res = await oneClick(f.unsubscribe);
  t.equal(res.status, 200);
  t.match(res.headers.get('content-type'), /text\/html/);
  t.match(await res.text(), /You are unsubscribed/);
  const contact = await contactOf(f.contactId!);
  t.equal(contact.status, 'unsubscribed');
  t.ok(contact.unsubscribed_at);
  const events = await engagementEvents(sql, f.sendId, 'unsubscribe');
  t.same(events, [
    {
      type: 'unsubscribe',
      campaign_id: f.campaignId,
      contact_id: f.contactId,
      recipient: f.email,
      detail: { method: 'one_click', user_agent: 'Mozilla/5.0 (compatible; GoogleMailUnsubscribe)', ip: '127.0.0.0' },
    },
  ]);
  t.match(await campaignStats(sql, f.campaignId!), { unsubscribes: 1 });

  const again = await oneClick(f.unsubscribe);
  t.equal(again.status, 200);
  t.match(await again.text(), /was already unsubscribed/);
  t.equal((await engagementEvents(sql, f.sendId, 'unsubscribe')).length, 1, 'nothing new recorded');
  t.match(await campaignStats(sql, f.campaignId!), { unsubscribes: 1 });
  t.same((await contactOf(f.contactId!)).unsubscribed_at, contact.unsubscribed_at, 'the first time is kept');
});

t.test('the multipart/form-data body RFC 8058 prefers, and an empty one, work alike', async (t) => {
  const form = new FormData();
  form.set('List-Unsubscribe', 'One-Click');
  const f = await campaignSend(ctx);
  const res = await fetch(origin + f.unsubscribe, { method: 'POST', body: form });
  t.equal(res.status, 200);
  t.equal((await contactOf(f.contactId!)).status, 'unsubscribed');
  const g = await campaignSend(ctx);
  t.equal((await fetch(origin + g.unsubscribe, { method: 'POST' })).status, 200);
  t.equal((await contactOf(g.contactId!)).status, 'unsubscribed');
});

t.test('GET shows a small accessible page with one button and changes nothing; the button unsubscribes', async (t) => {
  const f = await campaignSend(ctx);
  const res = await fetch(origin + f.unsubscribe);
  t.equal(res.status, 200);
  t.equal(res.headers.get('cache-control'), 'no-store');
  t.equal(res.headers.get('referrer-policy'), 'no-referrer');
  t.match(res.headers.get('content-security-policy'), /default-src 'none'/);
  const page = await res.text();
  t.match(page, /<html lang="en">/);
  t.match(page, /<h1>Unsubscribe<\/h1>/);
  // Masked: whoever holds the link (a forwarded message, a scanner) does not learn the address.
  const [local, domain] = f.email.split('@') as [string, string];
  t.match(page, `<strong>${local[0]}•••@${domain}</strong>`);
  t.notMatch(page, local, 'the local part is not shown');
  const form = /<form method="post" action="([^"]+)">/.exec(page);
  t.ok(form, 'a form posting back');
  t.match(page, /<button type="submit">Unsubscribe<\/button>/);
  t.notMatch(page, /<script/);
  t.equal((await contactOf(f.contactId!)).status, 'active', 'a GET (a link scanner) unsubscribes nobody');
  t.equal((await engagementEvents(sql, f.sendId)).length, 0);

  // What the browser posts: the form's fields to the form's action, resolved against the page's URL.
  const fields = new URLSearchParams([...page.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]+)">/g)].map((m): [string, string] => [m[1]!, m[2]!]));
  const action = new URL(form![1]!, origin + f.unsubscribe).pathname;
  t.equal(action, f.unsubscribe);
  const done = await oneClick(action, fields.toString());
  const answer = await done.text();
  t.match(answer, /<div class="done" role="status">/);
  t.match(answer, `<strong>${local[0]}•••@${domain}</strong> is unsubscribed`);
  t.notMatch(answer, local, 'nor on the answer');
  t.equal((await contactOf(f.contactId!)).status, 'unsubscribed');
  t.equal((await engagementEvents(sql, f.sendId, 'unsubscribe'))[0]!.detail['method'], 'page');
});

t.test('a send without a contact (transactional): its address is suppressed for its tenant, once', async (t) => {
  const f = await plainSend(ctx);
  t.equal((await oneClick(f.unsubscribe)).status, 200);
  const rows = await sql`select reason, source, message_id from suppressions where tenant_id = ${f.tenantId} and email = ${f.email}`;
  t.same(rows, [{ reason: 'unsubscribe', source: 'unsubscribe-link', message_id: f.sendId }]);
  t.match(await (await oneClick(f.unsubscribe)).text(), /already unsubscribed/);
  const events = await engagementEvents(sql, f.sendId, 'unsubscribe');
  t.equal(events.length, 1);
  t.same([events[0]!.campaign_id, events[0]!.contact_id], [null, null]);
});

t.test('broken links: 404 pages, nothing changed', async (t) => {
  const f = await campaignSend(ctx);
  const token = f.unsubscribe.slice(3);
  for (const path of [`/u/${token}x`, '/u/nothing', `/u/${f.open.slice(3)}`]) {
    const get = await fetch(origin + path);
    t.equal(get.status, 404, path.slice(0, 20));
    t.match(await get.text(), /This link does not work/);
    t.equal((await oneClick(path)).status, 404);
  }
  t.equal((await contactOf(f.contactId!)).status, 'active');
  t.equal((await engagementEvents(sql, f.sendId)).length, 0);
});

t.test("isolation: a tenant's token unsubscribes its own contact only, not another tenant's contact of the same address", async (t) => {
  const a = await campaignSend(ctx, { email: 'shared@dest.example' });
  const b = await campaignSend(ctx, { email: 'shared@dest.example' });
  await oneClick(a.unsubscribe);
  t.equal((await contactOf(a.contactId!)).status, 'unsubscribed');
  t.equal((await contactOf(b.contactId!)).status, 'active');
  t.match(await campaignStats(sql, b.campaignId!), { unsubscribes: 0 });
  t.equal((await sql`select 1 from suppressions where tenant_id = ${b.tenantId}`).length, 0);
});

t.test('the unsubscribe link is rate limited per client address in the tracking bucket', async (t) => {
  const f = await campaignSend(ctx);
  const res = await fetch(origin + f.unsubscribe);
  t.equal(res.headers.get('x-ratelimit-limit'), String(s.config.limits.rate_limits.per_minute.tracking));
});
