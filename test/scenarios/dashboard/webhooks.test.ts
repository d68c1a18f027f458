// Inbound and event webhooks in a real Chromium against a real `mailpath dev`: the inbound webhook pointed at the dev
// receiver through the page (secret shown once, the test POST's result shown), an event webhook whose delivery log
// fills as a message is delivered, a dead letter replayed, a mailbox and its messages; another workspace's ids read
// as "Not found". No serious accessibility violation, console error or CSP violation on any page.
import t from 'tap';
import type { APIRequestContext, Page } from 'playwright-core';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { mailToMx } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

const dev = await startDevServer(t, mailpathArgs('dev'));
const browser = await launchBrowser(t);
const unique = Math.random().toString(36).slice(2, 8);
const domainName = `hooks-${unique}.localhost`;

const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));

/** Registers a workspace through the API in this browser's context: its cookies are the session. */
async function register(request: APIRequestContext, slug: string) {
  const answer = await request.post(`${dev.origin}/api/v1/auth/session/register`, {
    data: { tenant_name: `Hooks ${slug}`, tenant_slug: slug, email: `owner@${slug}.localhost`, password: 'Correct-horse-42' },
  });
  if (!answer.ok()) throw new Error(`register: ${answer.status()} ${await answer.text()}`);
  return ((await answer.json()) as { data: { csrf_token: string } }).data.csrf_token;
}

/** A write through the API with the session's CSRF token, for the state a page only reads (a verified domain, a send). */
async function write(request: APIRequestContext, csrf: string, path: string, data?: unknown) {
  // A minute: adding a domain makes a 2048-bit RSA key, slow on a loaded machine.
  const answer = await request.post(`${dev.origin}/api/v1${path}`, { headers: { 'x-csrf-token': csrf }, timeout: 60_000, ...(data ? { data } : {}) });
  if (!answer.ok()) throw new Error(`${path}: ${answer.status()} ${await answer.text()}`);
  return ((await answer.json()) as { data: Record<string, unknown> }).data;
}

/** Waits until the page's main landmark says Loading no more (bounded: 40 tries, 250 ms apart). */
async function loaded(page: Page): Promise<void> {
  for (let i = 0; i < 40; i++) {
    if (!(await page.evaluate("document.querySelector('main')?.textContent.includes('Loading')"))) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Hands one message to Mailpath's MX, as another mail server would. */
const mailTo = (to: string, subject: string) =>
  mailToMx(dev, 'ann@sender.example', to, `From: Ann <ann@sender.example>\r\nTo: <${to}>\r\nSubject: ${subject}\r\n\r\nHello.`);

/** Clicks Refresh until a delivery's status badge reads `status` (bounded: 40 tries, 500 ms apart). */
async function refreshUntil(page: Page, status: string): Promise<boolean> {
  for (let i = 0; i < 40; i++) {
    if ((await page.locator('.deliveries .badge', { hasText: new RegExp(`^${status}$`) }).count()) > 0) return true;
    await new Promise((r) => setTimeout(r, 500));
    await page.getByRole('button', { name: 'Refresh' }).first().click();
  }
  return false;
}

t.test('inbound webhook, event webhooks with their log and dead letters, another workspace', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  const csrf = await register(page.request, `hooks-${unique}`);
  const domain = await write(page.request, csrf, '/domains', { name: domainName });
  t.equal((await write(page.request, csrf, `/domains/${domain['id']}/verify`))['status'], 'verified', 'the dev DNS verifies the domain');

  await page.goto(`${dev.origin}/app/inbound`);
  await page.getByRole('heading', { name: 'Inbound webhook' }).waitFor();
  await page.getByLabel('Webhook URL').fill(`${dev.inbox}/webhook`);
  await page.getByLabel('POST inbound mail to this URL').check();
  await page.getByRole('button', { name: 'Save webhook' }).click();
  const secret = (await page.getByTestId('secret').textContent())!;
  t.match(secret, /^whsec_/, 'the signing secret is shown on the first save');
  await page.getByRole('button', { name: 'Send a test message' }).click();
  await page.getByTestId('inbound-test-result').getByText('The receiver accepted the test').waitFor();
  t.match(await page.getByTestId('inbound-test-result').textContent(), /HTTP 200/, 'the test-send result shows the HTTP status');
  const posts = (await (await fetch(`${dev.inbox}/webhooks`)).json()) as { headers: Record<string, string> }[];
  t.ok(
    posts.some((p) => p.headers['x-mp-inbound-test'] === 'true'),
    'the dev receiver got the test POST',
  );

  await page.getByLabel('Address').fill(`support@${domainName}`);
  await page.getByLabel('Display name').fill('Support');
  await page.getByRole('button', { name: 'Create mailbox' }).click();
  await page.getByRole('heading', { name: `Messages to support@${domainName}` }).waitFor();
  await page.getByText('No messages yet.').waitFor();
  t.pass('a new mailbox is empty');
  await mailTo(`support@${domainName}`, 'Question about my order');
  let arrived = false;
  for (let i = 0; i < 40 && !arrived; i++) {
    await page.getByRole('button', { name: 'Refresh' }).click();
    arrived = await page.getByRole('cell', { name: /^Question about my order/ }).isVisible();
    if (!arrived) await new Promise((r) => setTimeout(r, 500));
  }
  t.ok(arrived, 'a message received by the MX shows in the mailbox');
  t.same(await accessibilityViolations(page), [], 'inbound: no serious or critical violation');
  await screenshot(page, 'inbound');
  await page.reload();
  await page.getByRole('heading', { name: 'Inbound webhook' }).waitFor();
  await page.getByLabel('Webhook URL').waitFor();
  t.equal(await page.getByTestId('secret').count(), 0, 'the secret is not shown again');
  t.equal(await page.getByLabel('Webhook URL').inputValue(), `${dev.inbox}/webhook`, 'the URL is kept');

  // One endpoint the dev receiver answers 200, one it answers 404 (a path it has no page for): a dead letter at once.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
  for (const path of ['/webhook/events', '/nowhere']) {
    await page.getByLabel('Endpoint URL').fill(`${dev.inbox}${path}`);
    await page.getByRole('checkbox', { name: 'Sent', exact: true }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await page.getByRole('link', { name: `${dev.inbox}${path}` }).waitFor();
    t.match(await page.getByTestId('secret').textContent(), /^whsec_/, `the secret of ${path} is shown once`);
  }
  const sent = await write(page.request, csrf, '/transactional/send', {
    to: 'ann@example.localhost',
    from_email: `hello@${domainName}`,
    subject: 'Hooks',
    body_text: 'Hello',
  });
  t.ok(sent['message_id'], 'a message is sent, to make events');

  await page.getByRole('link', { name: `${dev.inbox}/webhook/events` }).click();
  await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
  t.ok(await refreshUntil(page, 'delivered'), 'the delivery log shows a delivered delivery');
  await page.getByRole('button', { name: 'Send a test event' }).click();
  await page.getByTestId('endpoint-test-result').getByText('The receiver accepted the test').waitFor();
  t.same(await accessibilityViolations(page), [], 'an endpoint and its log: no serious or critical violation');
  await screenshot(page, 'webhook-log');
  const endpointId = page.url().split('/').pop()!;

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Dead letters' }).waitFor();
  let replay = false;
  for (let i = 0; i < 40 && !replay; i++) {
    await page.reload();
    await page.getByRole('heading', { name: 'Dead letters' }).waitFor();
    replay = await page
      .getByRole('button', { name: /^Replay/ })
      .first()
      .isVisible()
      .catch(() => false);
    if (!replay) await new Promise((r) => setTimeout(r, 500));
  }
  t.ok(replay, 'the refused delivery is a dead letter with a Replay button');
  t.same(await accessibilityViolations(page), [], 'webhooks: no serious or critical violation');
  await screenshot(page, 'webhooks');
  await page
    .getByRole('button', { name: /^Replay/ })
    .first()
    .click();
  await page.getByText('Queued again').waitFor();
  t.pass('a dead letter is replayed');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation on any page');

  const storage = await context.storageState();
  for (const options of [{ width: 390, height: 844 }, { colorScheme: 'dark' as const }]) {
    const viewer = await newUser(browser, options);
    t.teardown(() => viewer.context.close());
    await viewer.context.addCookies(storage.cookies);
    for (const path of ['/app/inbound', `/app/webhooks/${endpointId}`, '/app/webhooks']) {
      await viewer.page.goto(`${dev.origin}${path}`);
      await viewer.page.getByRole('heading', { level: 1 }).waitFor();
      await loaded(viewer.page);
      if (options.width) t.ok(await viewer.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${path}: nothing wider than a phone`);
      else t.same(await accessibilityViolations(viewer.page), [], `${path}, dark theme: no contrast or other serious violation`);
    }
    t.same(unexpected(viewer.problems.list), []);
  }

  const other = await newUser(browser);
  t.teardown(() => other.context.close());
  await register(other.page.request, `other-${unique}`);
  for (const path of [`/app/domains/${domain['id']}`, `/app/webhooks/${endpointId}`]) {
    await other.page.goto(`${dev.origin}${path}`);
    await other.page.getByRole('heading', { level: 1 }).waitFor();
    t.equal(await other.page.getByRole('heading', { level: 1 }).textContent(), 'Not found', `another workspace's ${path.split('/')[2]} id: Not found`);
    t.equal(await other.page.getByRole('main').count(), 1, 'inside the shell: one main landmark');
  }
  t.same(await accessibilityViolations(other.page), [], 'not found: no serious or critical violation');
  t.same(unexpected(other.problems.list), []);
});
