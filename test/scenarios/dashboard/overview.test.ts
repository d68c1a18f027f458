// The overview in a real Chromium against a real `mailpath dev`, its figures checked against what was seeded through
// the public API (as Plausible tests its dashboard): with a warm-up cap of 3 a day, four transactional sends: three
// delivered by the dev sink, the fourth deferred by the warm-up gate to tomorrow. They show as 4 sent and 3 delivered
// over 7 days and over 24 hours, 4 of the month's quota, 3 sent today on the domain (its cap), and under Gmail (one
// deferred) and Outlook in the provider table. A workspace without a verified domain is sent to onboarding. Light,
// dark, phone width; no serious accessibility violation, console error or CSP violation.
import t from 'tap';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { callDev, type ProviderFigures, refreshRollups, seedTenant, sendMail, signIn, waitForStatus } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

// A new domain's warm-up allows 3 sends a day (dev's own start is 5,000): the fourth is a deferral to count.
const dev = await startDevServer(t, mailpathArgs('dev'), { MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[3]', MAILPATH_CONFIG__WARMUP__INITIAL_TIER: '0' });
const browser = await launchBrowser(t);
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));

const acme = await seedTenant(dev, 'overview');
const ids = [
  await sendMail(dev, acme, 'ann@gmail.com', 'Your receipt'),
  await sendMail(dev, acme, 'bob@gmail.com', 'Your receipt'),
  await sendMail(dev, acme, 'cat@outlook.com', 'Welcome'),
];
await waitForStatus(dev, acme, ids, 'delivered');
const held = await sendMail(dev, acme, 'dan@gmail.com', 'Your receipt');
await waitForStatus(dev, acme, [held], 'deferred');
const figures = (providers: ProviderFigures[], esp: string) => providers.find((p) => p.esp === esp);
await refreshRollups(
  dev,
  acme,
  (providers) => figures(providers, 'gmail')?.deferred === 1 && figures(providers, 'gmail')?.delivered === 2 && figures(providers, 'outlook')?.delivered === 1,
);

t.test('the KPI cards, quota, domain and providers equal what was seeded', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, acme);
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Overview');
  const value = (id: string) => page.getByTestId(id).textContent();
  await page.getByTestId('kpi-sent-value').waitFor();
  t.equal(await value('kpi-sent-value'), '4', '7 days: 4 sent (the deferred one too)');
  t.equal(await value('kpi-delivered-value'), '3', '7 days: 3 delivered');
  t.equal(await value('kpi-bounced-value'), '0', 'none bounced (the dev sink accepts everything)');
  t.equal(await value('kpi-complained-value'), '0');
  t.match(await value('kpi-sent'), /None in the previous 7 days/, 'the change against the previous period is said in words');
  t.equal(await page.getByRole('radio', { name: 'Last 7 days' }).isChecked(), true, 'the default period is 7 days');

  await page.getByText('Last 24 hours', { exact: true }).click();
  await page.waitForURL(/period=24h/);
  await page.getByRole('heading', { name: 'Last 24 hours' }).waitFor();
  await page.getByTestId('kpi-delivered-value').waitFor();
  t.equal(await value('kpi-sent-value'), '4', '24 hours: 4 sent');
  t.equal(await value('kpi-delivered-value'), '3', '24 hours: 3 delivered');
  t.equal((await page.locator('.chart canvas').count()) >= 2, true, 'both charts are drawn');
  t.match(
    await page.getByRole('figure', { name: /^Sending:/ }).getAttribute('aria-label'),
    'Sent 4, Delivered 3, Bounced 0',
    'the chart is named with its totals',
  );

  await page.getByTestId('quota-used').waitFor();
  t.match(await value('quota-used'), /^4\s+of 50,000$/, "the month's quota: 4 of the starter plan's 50,000 (a deferred send counts)");
  t.notOk(await page.getByText("Over 80 % of this month's quota").isVisible(), 'no quota warning far below the cap');
  await page.getByTestId(`domain-${acme.domain}`).waitFor();
  t.equal(await page.getByTestId(`domain-${acme.domain}`).getByTestId('sent-today').textContent(), '3', 'the domain sent 3 today, its cap');
  t.match(await page.getByTestId(`domain-${acme.domain}`).textContent(), /verified/);
  t.match(await page.getByTestId('provider-gmail').textContent(), /^Gmail321/, 'Gmail: 3 sent, 2 delivered, 1 deferred');
  t.equal(await page.getByTestId('provider-gmail').getByTestId('deferred').textContent(), '1', "Gmail's deferred figure: the send over the cap");
  t.match(await page.getByTestId('provider-outlook').textContent(), /^Outlook110/, 'Outlook: 1 sent, 1 delivered, none deferred');
  t.equal(await page.getByRole('columnheader', { name: 'Deferred' }).count(), 1, 'the column is named');
  await page.getByTestId('trust-score').waitFor();
  t.match(await value('trust-score'), /\d+\s*\/ 100/, 'the trust score with its tier');
  t.notOk(await page.getByRole('heading', { name: 'Finish setting up' }).isVisible(), 'a verified domain: no set-up card');

  t.same(await accessibilityViolations(page), [], 'overview: no serious or critical accessibility violation');
  await screenshot(page, 'overview');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test('a workspace without a verified domain is shown the way to onboarding', async (t) => {
  const slug = `fresh-${Math.random().toString(36).slice(2, 8)}`;
  const fresh = { email: `owner@${slug}.localhost`, password: 'Correct-horse-42' };
  const res = await callDev(dev, 'POST', '/auth/register', undefined, { tenant_name: 'Fresh', tenant_slug: slug, ...fresh });
  t.equal(res.status, 201);
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, { ...fresh, slug, token: '', key: '', domain: '' });
  await page.getByRole('heading', { name: 'Finish setting up' }).waitFor();
  t.equal(await page.getByRole('link', { name: 'Finish setting up' }).getAttribute('href'), '/app/onboarding');
  await page.getByTestId('kpi-sent-value').waitFor();
  t.equal(await page.getByTestId('kpi-sent-value').textContent(), '0', 'nothing sent');
  t.same(unexpected(problems.list), []);
});

t.test('dark theme and phone width', async (t) => {
  const dark = await newUser(browser, { colorScheme: 'dark' });
  t.teardown(() => dark.context.close());
  await signIn(dark.page, dev, acme);
  await dark.page.getByTestId('kpi-sent-value').waitFor();
  await dark.page.locator('.chart canvas').first().waitFor();
  t.same(await accessibilityViolations(dark.page), [], 'dark overview: no contrast or other serious violation');
  await screenshot(dark.page, 'overview-dark');

  const phone = await newUser(browser, { width: 390, height: 844 });
  t.teardown(() => phone.context.close());
  await signIn(phone.page, dev, acme);
  await phone.page.getByTestId(`domain-${acme.domain}`).waitFor();
  await phone.page.locator('.chart canvas').first().waitFor();
  t.ok(await phone.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'nothing wider than a phone screen (tables scroll)');
  await screenshot(phone.page, 'overview-phone');
  t.same(unexpected([...dark.problems.list, ...phone.problems.list]), []);
});
