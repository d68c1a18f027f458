// The activity feed and the message page in a real Chromium against a real `mailpath dev`: the transactional sends
// seeded through the API are listed, the typed search narrows them (to: one recipient shows only its send), the
// message page shows the delivery on its timeline, the gates, the DKIM signature and the raw message; another
// workspace's message id shows "Not found" inside the shell; a workspace with more sends than a page (55, 50 a page)
// goes to the older page and back with the right rows on each. No serious accessibility violation, console error or
// CSP violation.
import t from 'tap';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { seedTenant, sendMail, signIn, waitForStatus } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

const dev = await startDevServer(t, mailpathArgs('dev'));
const browser = await launchBrowser(t);
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));

const acme = await seedTenant(dev, 'activity');
const other = await seedTenant(dev, 'elsewhere');
const annId = await sendMail(dev, acme, 'ann@gmail.com', 'Your receipt #1001');
const bobId = await sendMail(dev, acme, 'bob@outlook.com', 'Welcome aboard');
const foreignId = await sendMail(dev, other, 'zed@gmail.com', 'Not yours');
await waitForStatus(dev, acme, [annId, bobId], 'delivered');
// One after another, so each is accepted after the one before: newest first is #55 … #1.
const busy = await seedTenant(dev, 'busy');
const PAGED = 55;
for (let n = 1; n <= PAGED; n++) await sendMail(dev, busy, `r${n}@example.localhost`, `Order #${n}`);

t.test('the feed lists the sends; the typed search narrows them', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, acme);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Activity' }).click();
  await page.getByRole('heading', { name: 'Activity', level: 1 }).waitFor();
  await page.getByTestId('send-row').first().waitFor();
  t.equal(await page.getByTestId('send-row').count(), 2, "both of this workspace's sends, none of another's");
  t.match(await page.getByTestId('match-count').textContent(), /^2 sends/);
  const rows = await page.getByTestId('send-row').allTextContents();
  t.match(rows[0], /bob@outlook\.com.*Welcome aboard.*delivered/, 'newest first, with its status');
  t.match(rows[1], /ann@gmail\.com.*Your receipt #1001.*delivered/);
  t.same(await accessibilityViolations(page), [], 'activity: no serious or critical accessibility violation');
  await screenshot(page, 'activity');

  await page.getByLabel('Search sends').fill('to:ann@gmail.com');
  await page.keyboard.press('Enter');
  await page.waitForURL(/search=to%3Aann%40gmail\.com/);
  await page.getByText('1 send match').waitFor();
  t.same(
    (await page.getByTestId('send-row').allTextContents()).map((r) => /ann@gmail\.com/.test(r)),
    [true],
    'to: one recipient shows only its send',
  );

  await page.getByLabel('Search sends').fill('welcome status:delivered');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.waitForURL(/search=welcome/);
  await page.getByText('1 send match').waitFor();
  t.match(await page.getByTestId('send-row').textContent(), /bob@outlook\.com/, 'free text and status: together');

  await page.getByLabel('Search sends').fill('status:lost');
  t.match(
    await page
      .getByText(/status: is one of/)
      .first()
      .textContent(),
    /queued, deferred/,
    'an unknown status is named, not ignored',
  );

  await page.getByLabel('Search sends').fill('after:2999-01-01');
  await page.keyboard.press('Enter');
  await page.getByText('No send matches this search.').waitFor();
  t.pass('after: a date in the future matches nothing');
  await page.getByRole('button', { name: 'Clear' }).click();
  await page.getByText('2 sends').waitFor();
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test('the message page: verdict, timeline, gates, DKIM signature, raw message', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, acme);
  await page.goto(`${dev.origin}/app/activity`);
  await page.getByRole('link', { name: 'Your receipt #1001' }).click();
  await page.waitForURL(`${dev.origin}/app/activity/${annId}`);
  await page.getByRole('heading', { name: 'Your receipt #1001', level: 1 }).waitFor();
  t.match(await page.getByTestId('verdict').textContent(), /^delivered\s+Delivered: .* accepted it/, 'the verdict says it arrived');
  t.match(await page.getByTestId('envelope').textContent(), /ann@gmail\.com/);
  const timeline = await page.getByTestId('timeline').locator('li').allTextContents();
  t.ok(
    timeline.some((e) => /Event: send/.test(e)),
    'the acceptance is on the timeline',
  );
  t.ok(
    timeline.some((e) => /Delivery attempt: delivered.*250/.test(e)),
    'so is the delivery attempt with the 250 reply',
  );
  t.ok(
    timeline.some((e) => /Event: delivered/.test(e)),
    'and the delivered event',
  );
  t.match(await page.getByTestId('gates').textContent(), /warmup/, 'each gate decision is listed');
  await page.getByTestId('dkim').waitFor();
  const dkim = await page.getByTestId('dkim').textContent();
  t.match(dkim, new RegExp(`Signing domain \\(d=\\)${acme.domain.replace(/\./g, '\\.')}`), 'the DKIM signature names the domain');
  t.match(dkim, /Algorithm \(a=\)rsa-sha256/);
  await page.getByText(/Show the message exactly as it left/).click();
  t.match(await page.getByTestId('raw').textContent(), /^DKIM-Signature: /, 'the raw message starts with its DKIM-Signature');
  t.match(await page.getByTestId('raw').textContent(), /Subject: Your receipt #1001/);
  t.same(await accessibilityViolations(page), [], 'message: no serious or critical accessibility violation');
  await screenshot(page, 'message');

  await page.goto(`${dev.origin}/app/activity/${foreignId}`);
  await page.getByRole('heading', { name: 'Not found', level: 1 }).waitFor();
  t.match(await page.locator('main').textContent(), /There is nothing here, or it belongs to another workspace\./, "another workspace's message is not found");
  t.ok(await page.getByRole('navigation', { name: 'Main' }).isVisible(), 'inside the shell');
  t.notOk(await page.getByText('Not yours').isVisible(), 'nothing of it shows');
  t.same(await accessibilityViolations(page), [], 'not found: no serious or critical violation');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test('phone width: the feed and the message page fit', async (t) => {
  const phone = await newUser(browser, { width: 390, height: 844 });
  t.teardown(() => phone.context.close());
  await signIn(phone.page, dev, acme);
  await phone.page.goto(`${dev.origin}/app/activity`);
  await phone.page.getByTestId('send-row').first().waitFor();
  t.ok(await phone.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'the feed: nothing wider than the screen');
  await phone.page.goto(`${dev.origin}/app/activity/${bobId}`);
  await phone.page.getByTestId('dkim').waitFor();
  t.ok(await phone.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'the message page: nothing wider either');
  await screenshot(phone.page, 'message-phone');
  t.same(unexpected(phone.problems.list), []);
});

t.test('more sends than a page: the older page and back, the right rows on each', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, busy);
  await page.goto(`${dev.origin}/app/activity`);
  await page.getByTestId('send-row').first().waitFor();
  const subjects = async () => (await page.getByTestId('send-row').locator('td:nth-child(3) a').allTextContents()).map((s) => s.trim());
  const newest = Array.from({ length: 50 }, (_, i) => `Order #${PAGED - i}`);
  const oldest = Array.from({ length: PAGED - 50 }, (_, i) => `Order #${PAGED - 50 - i}`);
  t.same(await subjects(), newest, 'page 1: the 50 newest, newest first (#55 … #6)');
  t.equal(await page.getByTestId('match-count').textContent(), '55 sends; page 1');
  const pager = page.getByRole('navigation', { name: 'Pages of sends' });
  t.ok(await pager.getByRole('button', { name: 'Newer' }).isDisabled(), 'nothing newer than the first page');

  // By keyboard: the pager's buttons take focus and Enter.
  await pager.getByRole('button', { name: 'Older' }).focus();
  await page.keyboard.press('Enter');
  await page.getByText('55 sends; page 2').waitFor();
  t.same(await subjects(), oldest, 'page 2: the 5 oldest (#5 … #1), none of page 1 again');
  t.ok(await pager.getByRole('button', { name: 'Older' }).isDisabled(), 'nothing older than the last page');
  t.same(await accessibilityViolations(page), [], 'activity, page 2: no serious or critical violation');
  await screenshot(page, 'activity-page-2');

  await pager.getByRole('button', { name: 'Newer' }).click();
  await page.getByText('55 sends; page 1').waitFor();
  t.same(await subjects(), newest, 'back on page 1: the same 50 rows');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});
