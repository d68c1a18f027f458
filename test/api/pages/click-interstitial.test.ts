// The tracking host is no open redirect: click links of a test-key (simulated) send and of a sandbox tenant's send answer a
// page naming the target (escaped, a plain link with rel=noreferrer, strict CSP) instead of a 302; a suspended tenant's
// links stop redirecting within config/tracking.yaml click_pages.suspended_check_seconds; live links still redirect, old
// links (minted before tokens named the tenant) too; every click is recorded either way.
import { simpleParser } from 'mailparser';
import t from 'tap';
import { legacyClickToken, TRACKING_PATHS } from '../../../shared/engagement/tracking/link-tokens.js';
import { buildTestApp, call, createKey, registerTenant, superAdminToken, type TestTenant } from '../../helpers/app.js';
import { verifiedSendingDomain } from '../../helpers/sending-domain.js';
import { engagementEvents, HUMAN_UA } from '../../helpers/tracking.js';

const { app, ctx, sql } = await buildTestApp(t, { env: { MAILPATH_CONFIG__TRACKING__CLICK_PAGES__SUSPENDED_CHECK_SECONDS: '1' } });
// A target a page must show as text, never as markup.
const TARGET = 'https://shop.example/deal?a=1&b=<script>alert(1)</script>"x';

async function tenantWithKeys(): Promise<{ tenant: TestTenant; live: string; test: string; domain: string }> {
  const tenant = await registerTenant(app);
  const live = (await createKey(app, tenant, { scopes: ['transactional:send'] })).key;
  const test = (await createKey(app, tenant, { scopes: ['transactional:send'], mode: 'test' })).key;
  const domain = (await verifiedSendingDomain(sql, ctx.vault, tenant.tenantId)).name;
  return { tenant, live, test, domain };
}

/** A tracked transactional send; its click link's path and the send's id. */
async function trackedSend(key: string, domain: string): Promise<{ id: string; click: string; status: string }> {
  const body = {
    to: 'reader@dest.example',
    from_email: `news@${domain}`,
    subject: 'Hi',
    body_html: `<html><body><a href="${TARGET.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;')}">Deal</a></body></html>`,
    track_clicks: true,
  };
  const res = await call(app, 'POST', '/transactional/send', { token: key, body });
  if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
  const id = res.body.data.message_id as string;
  const [row] = await sql<{ message: Buffer; status: string }[]>`select message, status from sends where id = ${id}`;
  const html = String((await simpleParser(row!.message)).html);
  const href = /href="([^"]+\/c\/[^"]+)"/.exec(html)![1]!.replace(/&amp;/g, '&');
  return { id, click: new URL(href).pathname, status: row!.status };
}

const click = (path: string) => app.inject({ method: 'GET', url: path, headers: { 'user-agent': HUMAN_UA }, remoteAddress: '203.0.113.77' });

type Checks = Pick<typeof t, 'equal' | 'match' | 'notMatch'>;

function isInterstitial(t: Checks, res: Awaited<ReturnType<typeof click>>, why: RegExp): void {
  t.equal(res.statusCode, 200, 'a page, not a redirect');
  t.equal(res.headers['location'], undefined);
  t.match(res.headers['content-security-policy'], /default-src 'none'/);
  t.equal(res.headers['referrer-policy'], 'no-referrer');
  const page = res.body;
  t.notMatch(page, /<script/, 'no script, and the target is never markup');
  // The target as the redirect would have gone (the URL parser percent-encodes < > "), HTML-escaped.
  const href = new URL(TARGET).href.replace(/&/g, '&amp;');
  t.match(page, `<a href="${href}" rel="noreferrer noopener nofollow">${href}</a>`, 'the target named, as a link to follow');
  t.match(page, why);
}

t.test('a test-key (simulated) send: its click link answers a page naming the target, and the click is recorded', async (t) => {
  const { test, domain } = await tenantWithKeys();
  const send = await trackedSend(test, domain);
  t.equal(send.status, 'simulated');
  isInterstitial(t, await click(send.click), /test message that was never delivered/);
  t.equal((await engagementEvents(sql, send.id, 'click')).length, 1);
});

t.test("a sandbox tenant's send (live key): a page too", async (t) => {
  const { tenant, live, domain } = await tenantWithKeys();
  const admin = await superAdminToken(app);
  t.equal((await call(app, 'PUT', `/admin/tenants/${tenant.tenantId}/sandbox`, { token: admin, body: { is_sandbox: true } })).status, 200);
  const send = await trackedSend(live, domain);
  t.equal(send.status, 'simulated');
  isInterstitial(t, await click(send.click), /test message that was never delivered/);
});

t.test("a live send redirects; once its tenant is suspended, its links (new and old) stop redirecting within the check's bound", async (t) => {
  const { tenant, live, domain } = await tenantWithKeys();
  const send = await trackedSend(live, domain);
  const redirect = await click(send.click);
  t.equal(redirect.statusCode, 302);
  t.equal(redirect.headers['location'], new URL(TARGET).href);
  const old = `${TRACKING_PATHS.click}${legacyClickToken(ctx.linkKey, send.id, TARGET, 1)}`;
  t.equal((await click(old)).statusCode, 302, 'a link minted before tokens named the tenant still redirects');

  const admin = await superAdminToken(app);
  t.equal((await call(app, 'POST', `/admin/tenants/${tenant.tenantId}/suspend`, { token: admin, body: { reason: 'abuse' } })).status, 200);
  // Suspensions are read at most once a second here (click_pages.suspended_check_seconds): bounded wait.
  const start = Date.now();
  let res = await click(send.click);
  while (res.statusCode === 302 && Date.now() - start < 3000) {
    await new Promise((r) => setTimeout(r, 100));
    res = await click(send.click);
  }
  isInterstitial(t, res, /account that sent this message is suspended/);
  isInterstitial(t, await click(old), /suspended/);
  t.ok((await engagementEvents(sql, send.id, 'click')).length >= 4, 'every click recorded');
});
