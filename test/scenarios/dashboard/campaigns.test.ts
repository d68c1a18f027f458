// The campaign pages in a real Chromium against a real `mailpath dev` whose new domains may send 3 a day: a campaign
// written in the editor to a list of 5, its confirmation forecasting 3 today under the warm-up cap as the API does,
// previewed for a contact, sent, watched to 3 delivered with the rest waiting for tomorrow's allowance (a 429 met while
// watching waits its Retry-After), its report and goal conversions equal to the API's, a proof rendered for a contact,
// listed and found by name, duplicated and the copy scheduled in chosen time zones; an A/B test's variants and
// significance as the API reports them, finalized from the report; the analytics page's totals and cohort equal the
// API's. No serious accessibility violation, console error or CSP violation.
import t from 'tap';
import { Agent, request } from 'undici';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { callDev, refreshRollups, type SeededTenant, seedTenant, signIn } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

// One owner signs in for every test here, and its reads share one per-minute allowance (60 by default): this file
// makes more than that in a minute, which is not what it tests (a 429 is answered by the browser where it is).
const dev = await startDevServer(t, mailpathArgs('dev'), {
  MAILPATH_CONFIG__WARMUP__TIER_CAPS: '[3]',
  MAILPATH_CONFIG__WARMUP__INITIAL_TIER: '0',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: '100000',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '100000',
});
const browser = await launchBrowser(t);
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

async function api(tenant: SeededTenant, method: 'GET' | 'POST', path: string, body?: unknown) {
  const answer = await callDev(dev, method, path, tenant.key, body);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return (answer.body as { data: any }).data;
}

const acme = await seedTenant(dev, 'campaigns');
/** A list of five contacts imported through the API, waited for (bounded: 80 tries, 250 ms apart). */
async function seedList(tenant: SeededTenant, name: string): Promise<{ id: string }> {
  const created = await api(tenant, 'POST', '/lists', { name });
  const csv = `email,first_name\n${['ann', 'bob', 'cat', 'dan', 'eve'].map((n) => `${n}@example.com,${n}`).join('\n')}\n`;
  const imported = await request(`${dev.origin}/api/v1/contacts/imports?list_id=${created.id}`, {
    method: 'POST',
    dispatcher: insecure,
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'text/csv' },
    body: csv,
  });
  const importId = ((await imported.body.json()) as { data: { id: string } }).data.id;
  for (let i = 0; i < 80 && (await api(tenant, 'GET', `/lists/${created.id}`)).member_count < 5; i++) await new Promise((r) => setTimeout(r, 250));
  if ((await api(tenant, 'GET', `/contacts/imports/${importId}`)).inserted !== 5) throw new Error('the list was not seeded');
  return created;
}
const list = await seedList(acme, 'Newsletter');

/** Reloads until the page's progress reads `delivered` delivered (bounded: 60 tries, 500 ms apart). */
async function waitDelivered(page: import('playwright-core').Page, delivered: number): Promise<boolean> {
  for (let i = 0; i < 60; i++) {
    const words =
      (await page
        .getByTestId('progress-words')
        .textContent()
        .catch(() => '')) ?? '';
    if (words.endsWith(`${delivered} delivered`)) return true;
    await new Promise((r) => setTimeout(r, 500));
  }
  return false;
}

t.test('from the editor to the report: the forecast under a 3-a-day cap, 3 delivered, the rest waiting', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, acme);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Campaigns' }).click();
  await page.getByRole('link', { name: 'New campaign' }).click();
  await page.getByLabel('Name').fill('December news');
  await page.getByLabel('Send to').selectOption({ label: 'Newsletter' });
  await page.getByTestId('target-count').getByText('5 members').waitFor();
  await page.getByLabel('Subject', { exact: true }).fill('News for {{ contact.first_name }}');
  await page.getByLabel('HTML body').fill('<p>Hello {{ contact.first_name }}, see <a href="https://example.com/news">the news</a>.</p>');
  await page.getByLabel('Text body').fill('Hello {{ contact.first_name }}.');
  t.same(await accessibilityViolations(page), [], 'the editor: no serious or critical violation');
  await screenshot(page, 'campaign-editor');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  await page.waitForURL(/\/app\/campaigns\/[0-9a-f-]{36}$/);
  const id = page.url().split('/').pop()!;
  const stored = await api(acme, 'GET', `/campaigns/${id}`);
  t.same([stored.name, stored.list_id, stored.status], ['December news', list.id, 'draft'], 'the API has the draft with its list');

  await page.getByLabel('Preview it for the contact').fill('Ann@example.com');
  await page.getByRole('button', { name: 'Preview', exact: true }).click();
  await page.getByTestId('preview-subject').waitFor();
  const contacts = await api(acme, 'GET', '/contacts?q=ann@example.com');
  const previewed = await api(acme, 'POST', `/campaigns/${id}/preview`, { contact_id: contacts.items[0].id });
  t.equal(previewed.subject, 'News for ann', 'the API renders it for Ann');
  t.equal(await page.getByTestId('preview-subject').textContent(), previewed.subject, "the page's preview: the API's subject");
  t.equal(await page.getByTestId('preview-text').textContent(), previewed.text, 'and its text');
  t.equal(await page.getByTestId('preview-html').textContent(), previewed.html, 'and its HTML');
  t.match(await page.getByTestId('preview-envelope').textContent(), `to ann@example.com`, 'made for her address');
  const frame = page.frameLocator('iframe[title="The HTML body, rendered"]');
  t.equal(await frame.getByRole('link', { name: 'the news' }).getAttribute('href'), 'https://example.com/news', 'the link as sent, untracked');
  t.same(await accessibilityViolations(page), [], 'a previewed draft: no serious or critical violation');

  await page.getByRole('button', { name: 'Send now' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByTestId('forecast').waitFor();
  const forecast = await api(acme, 'GET', `/campaigns/${id}/forecast`);
  t.same([forecast.recipients, forecast.today, forecast.limited_by], [5, 3, 'warmup'], 'the API: 3 of 5 today, held by the warm-up cap');
  t.equal(await dialog.getByTestId('forecast-today').textContent(), '3 of 5', 'the confirmation says 3 of 5 go today');
  t.match(await dialog.getByTestId('forecast').textContent(), /warm-up allowance/, 'and what holds the rest back');
  t.match(await dialog.getByTestId('forecast').textContent(), /tier 0, 3 a day/, 'the tier and its cap');
  t.ok(await dialog.getByTestId('forecast-rest').isVisible(), 'and when the rest starts going');
  t.same(await accessibilityViolations(page), [], 'the send confirmation: no serious or critical violation');
  await screenshot(page, 'campaign-forecast');
  await dialog.getByRole('button', { name: 'Send now' }).click();

  t.ok(await waitDelivered(page, 3), 'the progress reaches 3 delivered');
  const after = await api(acme, 'GET', `/campaigns/${id}`);
  t.same([after.progress.delivered, after.waiting_reason], [3, 'warmup_cap'], 'the API: 3 delivered, the rest waiting for the cap');
  await page
    .getByTestId('waiting')
    .getByText(/tomorrow's warm-up allowance/)
    .waitFor();
  const stats = await api(acme, 'GET', `/campaigns/${id}/stats`);
  await page.getByTestId('kpi-delivered-value').getByText(String(stats.delivered)).waitFor();
  t.equal(await page.getByTestId('kpi-sent-value').textContent(), String(stats.sent), 'the report: sent as the API says');
  t.equal(stats.delivered, 3, 'the API: 3 delivered');
  t.equal(await page.getByTestId('kpi-opens-value').textContent(), String(stats.unique_opens), 'opens as the API says');
  t.same(await accessibilityViolations(page), [], 'a sending campaign: no serious or critical violation');
  await screenshot(page, 'campaign-sending');

  // The API's rate limit met while the page watches (answered here by the browser, once, as the API words it): the
  // report stays shown with a line saying so, and the next read waits the Retry-After asked for, not the usual 3 s.
  const reads: number[] = [];
  await page.route(`**/api/v1/campaigns/${id}`, async (route) => {
    if (route.request().method() !== 'GET') return route.continue();
    reads.push(Date.now());
    if (reads.length > 1) return route.continue();
    const body = JSON.stringify({ error: 'rate_limited', message: 'Too many requests: try again in 7 s.' });
    return route.fulfill({ status: 429, headers: { 'content-type': 'application/json', 'retry-after': '7' }, body });
  });
  await page.getByTestId('rate-limited').waitFor({ timeout: 10_000 });
  t.match(await page.getByTestId('rate-limited').textContent(), /wait 7 s/, 'the page says how long it waits');
  t.ok(await page.getByTestId('kpi-sent-value').isVisible(), 'the report stays shown');
  await page.getByTestId('rate-limited').waitFor({ state: 'detached', timeout: 15_000 });
  t.equal(reads.length, 2, 'one read after the refusal');
  t.ok(reads[1]! - reads[0]! >= 6_900, `the next read waited the Retry-After (${reads[1]! - reads[0]!} ms)`);
  await page.unroute(`**/api/v1/campaigns/${id}`);

  const conversions = await api(acme, 'GET', `/campaigns/${id}/goal-conversions`);
  t.equal(
    await page.getByTestId('goal-conversions').textContent(),
    `${conversions.total_conversions} conversions by ${conversions.unique_converters} contacts, ${(conversions.revenue_cents / 100).toFixed(2)} in revenue`,
    'goal conversions as the API counts them',
  );
  t.equal(await page.getByRole('link', { name: 'Download every event (CSV)' }).count(), 1, 'the engagement CSV is offered');

  await page.getByLabel('Send a proof to').fill('proof@example.com');
  await page.getByLabel('Render it for the contact').fill('ann@example.com');
  await page.getByRole('button', { name: 'Send proof' }).click();
  const proof = page.getByTestId('proofs').getByRole('link', { name: 'proof@example.com' });
  await proof.waitFor();
  const sendId = (await proof.getAttribute('href'))!.split('/').pop()!;
  const proofSend = await api(acme, 'GET', `/sends/${sendId}`);
  t.equal(proofSend.subject, '[Proof] News for ann', 'the proof is rendered for Ann, marked as a proof');
  t.match(await page.getByTestId('proofs').textContent(), `proof@example.com: ${proofSend.status}`, 'its status as the API has it');

  await page.getByRole('link', { name: 'All campaigns' }).click();
  await page.getByLabel('Name or subject contains').fill('december');
  await page.getByRole('button', { name: 'Search' }).click();
  const row = page.getByTestId('campaign-row').filter({ hasText: 'December news' });
  await row.waitFor();
  t.match(await row.textContent(), /3 of 5/, 'listed with 3 of its 5 sent');
  t.same(await accessibilityViolations(page), [], 'campaigns: no serious or critical violation');
  await screenshot(page, 'campaigns');

  await row.getByRole('link', { name: 'December news' }).click();
  await page.getByRole('button', { name: 'Duplicate' }).click();
  await page.waitForURL((url) => /\/app\/campaigns\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(id));
  await page.getByRole('button', { name: 'Save campaign' }).waitFor();
  t.equal(await page.getByLabel('Name').inputValue(), (await api(acme, 'GET', `/campaigns/${page.url().split('/').pop()}`)).name, 'the copy, a draft');

  // Scheduled in a chosen zone: the wall-clock time typed is that zone's, on the date's own side of daylight saving.
  const copyId = page.url().split('/').pop()!;
  const scheduledAt = async () => new Date((await api(acme, 'GET', `/campaigns/${copyId}`)).scheduled_at).toISOString();
  await page.getByLabel('Time zone').selectOption('Asia/Tokyo');
  await page.getByLabel('Send later, at').fill('2027-01-15T09:00');
  await page.getByRole('button', { name: 'Schedule', exact: true }).click();
  await page.getByRole('button', { name: 'Unschedule' }).waitFor();
  t.equal(await scheduledAt(), '2027-01-15T00:00:00.000Z', '09:00 in Tokyo is midnight UTC, as the API stores it');
  t.match(await page.getByTestId('waiting').first().textContent(), /goes at Jan 15, 2027, 9:00\sAM GMT\+9/, "and reads as Tokyo's 09:00");
  await page.getByRole('button', { name: 'Unschedule' }).click();
  await page.getByRole('button', { name: 'Schedule', exact: true }).waitFor();
  await page.getByLabel('Time zone').selectOption('America/New_York');
  for (const [local, utc] of [
    ['2027-07-01T09:00', '2027-07-01T13:00:00.000Z'],
    ['2027-01-15T09:00', '2027-01-15T14:00:00.000Z'],
  ] as const) {
    await page.getByLabel('Send later, at').fill(local);
    await page.getByRole('button', { name: 'Schedule', exact: true }).click();
    await page.getByRole('button', { name: 'Unschedule' }).waitFor();
    t.equal(await scheduledAt(), utc, `${local} in New York is ${utc}`);
    await page.getByRole('button', { name: 'Unschedule' }).click();
    await page.getByRole('button', { name: 'Schedule', exact: true }).waitFor();
  }
  await page.reload();
  t.equal(await page.getByLabel('Time zone').inputValue(), 'America/New_York', 'the zone chosen is kept in this browser');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test("analytics: the range's totals, the providers and this week's cohort equal the API's", async (t) => {
  await refreshRollups(dev, acme, (providers) => providers.some((p) => p.delivered === 3));
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, acme);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Analytics' }).click();
  await page.getByTestId('rollup-totals').waitFor();
  const since = new Date(Date.now() - 30 * 24 * 3_600_000).toISOString();
  const rollup = await api(acme, 'GET', `/analytics/rollup?granularity=day&since=${encodeURIComponent(since)}`);
  const sum = (key: string) => rollup.buckets.reduce((n: number, b: Record<string, number>) => n + b[key]!, 0);
  t.equal(sum('delivered'), 3, 'the API: 3 delivered in 30 days');
  t.match(await page.getByTestId('rollup-totals').textContent(), `${sum('sent')} sent · ${sum('delivered')} delivered`, 'the page: the same totals');
  const hourlySince = encodeURIComponent(new Date(Date.now() - 72 * 3_600_000).toISOString());
  const hourly = await api(acme, 'GET', `/analytics/rollup?granularity=hour&since=${hourlySince}`);
  const hourlySum = (key: string) => hourly.buckets.reduce((n: number, b: Record<string, number>) => n + b[key]!, 0);
  await page.getByLabel('Range').selectOption('72h');
  await page
    .getByTestId('rollup-totals')
    .getByText(`${hourlySum('sent')} sent · ${hourlySum('delivered')} delivered`, { exact: false })
    .waitFor();
  t.equal(hourlySum('delivered'), 3, 'by hour over 72 hours: the same 3 delivered, as the API sums them');
  const cohorts = await api(acme, 'GET', '/analytics/cohort-retention?metric=opened&weeks=8');
  const newest = cohorts.cohorts.at(-1);
  t.equal(newest.size, 5, "the API: this week's cohort is the 5 imported");
  await page.getByTestId('cohort-row').last().waitFor();
  t.match(await page.getByTestId('cohort-row').last().textContent(), `${newest.week_start}5`, "the page: this week's cohort of 5");
  t.ok((await page.getByTestId('cohort-row').count()) === cohorts.cohorts.length, 'one row per cohort, as the API lists them');
  t.same(await accessibilityViolations(page), [], 'analytics: no serious or critical violation');
  await screenshot(page, 'analytics');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test("an A/B test: each variant's figures and the significance as the API reports them, finalized from the report", async (t) => {
  const tester = await seedTenant(dev, 'ab');
  const audience = await seedList(tester, 'Testers');
  const created = await api(tester, 'POST', '/campaigns', {
    name: 'Subject test',
    list_id: audience.id,
    subject: 'Plain subject',
    subject_b: 'Exciting subject',
    ab_split_pct: 40,
    body_text: 'Hello {{ contact.first_name }}.',
  });
  await api(tester, 'POST', `/campaigns/${created.id}/send`);
  let campaign = await api(tester, 'GET', `/campaigns/${created.id}`);
  for (let i = 0; i < 60 && !(campaign.progress.delivered === 2 && campaign.waiting_reason === 'ab_winner'); i++) {
    await new Promise((r) => setTimeout(r, 500));
    campaign = await api(tester, 'GET', `/campaigns/${created.id}`);
  }
  t.same([campaign.progress.delivered, campaign.waiting_reason], [2, 'ab_winner'], 'the API: 2 of 5 tried, the rest waiting for a winner');
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, tester);
  await page.goto(`${dev.origin}/app/campaigns/${created.id}`);
  await page.getByTestId('ab-variants').waitFor();
  const results = await api(tester, 'GET', `/campaigns/${created.id}/ab-results`);
  for (const v of ['a', 'b'] as const) {
    const row = await page.getByTestId(`ab-variant-${v}`).textContent();
    const figures = results[`variant_${v}`];
    t.match(row, `${figures.subject}${figures.delivered}${figures.unique_opens}`, `variant ${v}: its subject, delivered and opens as the API says`);
  }
  t.match(
    await page.getByTestId('ab-significance').textContent(),
    results.significance.significant ? /significant at 95 %/ : /No significant difference yet/,
    'the test as the API decides it',
  );
  await page.getByTestId('waiting').getByText('waiting for the A/B winner').waitFor();
  t.same(await accessibilityViolations(page), [], 'an A/B test: no serious or critical violation');
  await screenshot(page, 'campaign-ab');
  await page.getByRole('button', { name: 'Send B to the rest' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Send B to the rest' }).click();
  await page.getByTestId('ab-variant-b').getByText('winner').waitFor();
  const after = await api(tester, 'GET', `/campaigns/${created.id}/ab-results`);
  t.equal(after.winner, 'b', 'the API: B declared the winner');
  t.equal(await page.getByRole('button', { name: 'Send A to the rest' }).count(), 0, 'no second verdict offered');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});
