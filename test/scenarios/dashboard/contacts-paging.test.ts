// 100,000 contacts imported through the dashboard's import page, in a real Chromium against a real `mailpath dev`:
// the import watched while it runs (a bar part-way, then every row), and the contacts page paged at the start and at
// the very end, each page's rows and total equal to the API's, the total read from the per-status counters rather
// than counted from the rows on each page. No serious accessibility violation, console error or CSP violation.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { callDev, seedTenant, signIn } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

const CONTACTS = 100_000;
const PAGE_SIZE = 50;

// The watched import reads again every 3 s, and the assertions read the API too: more than 60 reads a minute.
const dev = await startDevServer(t, mailpathArgs('dev'), {
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: '100000',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '100000',
});
const browser = await launchBrowser(t);
// The app's first session check, signed out, is a 401 the browser logs: expected.
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));
const sql = postgres(dev.databaseUrl, { max: 1, onnotice: () => {} });
t.teardown(() => sql.end());
const acme = await seedTenant(dev, 'paging');

async function contactsPage(offset: number): Promise<{ emails: string[]; total: number }> {
  const answer = await callDev(dev, 'GET', `/contacts?limit=${PAGE_SIZE}&offset=${offset}`, acme.key);
  if (answer.status !== 200) throw new Error(`GET /contacts: ${answer.status} ${JSON.stringify(answer.body)}`);
  const body = answer.body as { data: { items: { email: string }[]; total: number } };
  return { emails: body.data.items.map((c) => c.email), total: body.data.total };
}

t.test('100,000 contacts: imported through the page while watched, then paged at both ends as the API pages', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, acme);
  await page.goto(`${dev.origin}/app/audiences/imports`);
  const file = join(dev.dataDir, 'everyone.csv');
  const rows = Array.from({ length: CONTACTS }, (_, i) => `person${String(i).padStart(6, '0')}@example.com,Person ${i}`);
  writeFileSync(file, `email,first_name\n${rows.join('\n')}\n`);
  await page.getByLabel('File to import').setInputFiles(file);
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.getByRole('link', { name: 'Follow it' }).click();

  // Every reading of the bar until it ends (bounded: 600 readings, 250 ms apart).
  const readings: string[] = [];
  for (let i = 0; i < 600; i++) {
    const words =
      (await page
        .getByTestId('import-progress')
        .textContent({ timeout: 5_000 })
        .catch(() => '')) ?? '';
    if (words && words !== readings.at(-1)) readings.push(words);
    if (words.endsWith('rows done')) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  t.comment(`the bar read: ${readings.join(' | ')}`);
  t.equal(readings.at(-1), '100,000 rows done', 'the bar ends at every row');
  const partWay = readings
    .map((w) => /^([\d,]+) (?:of 100,000 rows|rows so far) \(running\)$/.exec(w))
    .filter((m) => m !== null)
    .map((m) => Number(m[1]!.replaceAll(',', '')));
  t.ok(
    partWay.some((n) => n > 0 && n < CONTACTS),
    'while it ran, the bar stood part-way',
  );
  const id = page.url().split('/').pop()!;
  const imported = (await callDev(dev, 'GET', `/contacts/imports/${id}`, acme.key)).body as { data: { inserted: number; status: string } };
  t.same([imported.data.status, imported.data.inserted], ['completed', CONTACTS], 'the API: every row a new contact');
  t.match(await page.getByTestId('import-counts').textContent(), /New contacts100,000/, 'the page: 100,000 new contacts');

  await page.goto(`${dev.origin}/app/audiences/contacts`);
  await page.getByTestId('contact-count').getByText('100,000 contacts; showing 1–50').waitFor();
  const tableEmails = async () => page.getByTestId('contact-row').locator('td:first-child').allTextContents();
  t.same(await tableEmails(), (await contactsPage(0)).emails, 'the first page: the API’s first 50, newest first');
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByTestId('contact-count').getByText('100,000 contacts; showing 51–100').waitFor();
  t.same(await tableEmails(), (await contactsPage(PAGE_SIZE)).emails, 'the second page: the API’s next 50');
  t.same(await accessibilityViolations(page), [], 'the contacts page at 100,000: no serious or critical violation');
  await screenshot(page, 'contacts-100k');

  const lastOffset = CONTACTS - PAGE_SIZE;
  await page.goto(`${dev.origin}/app/audiences/contacts?offset=${lastOffset}`);
  await page.getByTestId('contact-count').getByText('100,000 contacts; showing 99,951–100,000').waitFor();
  const last = await contactsPage(lastOffset);
  t.same(await tableEmails(), last.emails, 'the last page: the API’s last 50');
  t.equal(last.emails.at(-1), 'person000000@example.com', 'ending with the first row imported');
  t.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled(), 'nothing after the last page');
  await page.getByRole('button', { name: 'Previous page' }).click();
  await page.getByTestId('contact-count').getByText('showing 99,901–99,950', { exact: false }).waitFor();

  // A page's total is the per-status counter the contact writes keep, not a count of the rows: moved by hand (and
  // put back), the counter is what the next page shows. A page that counted 100,000 rows would still say 100,000.
  const tenantId = (await sql<{ tenant_id: string }[]>`select tenant_id from contacts limit 1`)[0]!.tenant_id;
  await sql`update contact_counts set n = n + 7 where tenant_id = ${tenantId} and status = 'active'`;
  try {
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByTestId('contact-count').getByText('100,007 contacts', { exact: false }).waitFor();
    t.equal((await contactsPage(0)).total, CONTACTS + 7, 'the API answers the counter too');
  } finally {
    await sql`update contact_counts set n = n - 7 where tenant_id = ${tenantId} and status = 'active'`;
  }
  t.equal((await contactsPage(0)).total, CONTACTS, 'and the counter, put back, equals the rows');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});
