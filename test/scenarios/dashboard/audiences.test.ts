// The audience pages in a real Chromium against a real `mailpath dev`, every figure checked against the API: a CSV
// with bad rows imported through the page into a list (progress to completed, counts, the invalid rows by line and
// their file), the contacts page (its total, search, status filter, paging over 120 contacts), a contact's page with
// its history, erasure behind a confirmation, a list's members and adding one; another workspace's contact reads as
// "Not found". No serious accessibility violation, console error or CSP violation on any page.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Agent, request } from 'undici';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { callDev, type SeededTenant, seedTenant, sendMail, signIn, waitForStatus } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

// Every test here signs in as the same owner, whose reads share one per-minute allowance (60 by default): this file
// makes more than that in a minute, which is not what it tests.
const dev = await startDevServer(t, mailpathArgs('dev'), {
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: '100000',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '100000',
});
const browser = await launchBrowser(t);
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

async function api(tenant: SeededTenant, method: 'GET' | 'POST', path: string, body?: unknown) {
  const answer = await callDev(dev, method, path, tenant.key, body);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as { data: any; total?: number };
}

/** An import through the API (the file as the body), waited for until it ends (bounded: 80 tries, 250 ms apart). */
async function importCsv(tenant: SeededTenant, csv: string, query = ''): Promise<any> {
  const res = await request(`${dev.origin}/api/v1/contacts/imports${query}`, {
    method: 'POST',
    dispatcher: insecure,
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': 'text/csv' },
    body: csv,
  });
  const started = (await res.body.json()) as { data: { id: string } };
  for (let i = 0; i < 80; i++) {
    const row = (await api(tenant, 'GET', `/contacts/imports/${started.data.id}`)).data;
    if (row.status === 'completed' || row.status === 'failed') return row;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('the import did not end in 20 s');
}

const acme = await seedTenant(dev, 'audiences');
const other = await seedTenant(dev, 'elsewhere');
const customers = (await api(acme, 'POST', '/lists', { name: 'Customers' })).data as { id: string };
// 120 contacts (paging), one of them unsubscribed (the status filter), one mailed (a contact's history).
const rows = Array.from({ length: 120 }, (_, i) => `person${String(i).padStart(3, '0')}@example.com,Person,${i}`);
const seeded = await importCsv(acme, `email,first_name,last_name\n${rows.join('\n')}\n`);
if (seeded.inserted !== 120) throw new Error(`seeding imported ${seeded.inserted}`);
const unsubscribed = (await api(acme, 'GET', '/contacts?q=person007@')).data.items[0] as { id: string };
const patched = await request(`${dev.origin}/api/v1/contacts/${unsubscribed.id}`, {
  method: 'PATCH',
  dispatcher: insecure,
  headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
  body: JSON.stringify({ status: 'unsubscribed' }),
});
if (patched.statusCode !== 200) throw new Error(`unsubscribing: ${patched.statusCode} ${await patched.body.text()}`);
await waitForStatus(dev, acme, [await sendMail(dev, acme, 'person001@example.com', 'Your receipt')], 'delivered');
const otherContact = (await api(other, 'POST', '/contacts', { email: 'someone@example.com' })).data as { id: string };
// Signed in once, through the sign-in page; every test's browser starts from that session.
const session = await (async () => {
  const first = await newUser(browser);
  await signIn(first.page, dev, acme);
  const state = await first.context.storageState();
  await first.context.close();
  return state;
})();

t.test('a CSV with bad rows imported through the page into a list: progress, counts and the invalid rows equal the API', async (t) => {
  const { page, problems, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audiences' }).click();
  await page.getByRole('navigation', { name: 'Audiences' }).getByRole('link', { name: 'Imports' }).click();
  await page.getByRole('heading', { name: 'Imports', level: 1 }).waitFor();
  const file = join(dev.dataDir, 'new-customers.csv');
  // Lines 3 and 5 are bad: no address, and an address that is not one.
  writeFileSync(file, 'email,first_name\nnew1@example.com,Ann\n,Nobody\nnew2@example.com,Bob\nnot-an-address,Bad\nnew3@example.com,Cat\n');
  await page.getByLabel('File to import').setInputFiles(file);
  await page.getByLabel('Add everyone imported to a list').selectOption({ label: 'Customers' });
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page.getByRole('link', { name: 'Follow it' }).click();
  await page.getByRole('heading', { name: 'Invalid rows' }).waitFor({ timeout: 20_000 });
  await page.getByTestId('import-counts').getByText('completed').waitFor();
  const id = page.url().split('/').pop()!;
  const row = (await api(acme, 'GET', `/contacts/imports/${id}`)).data;
  t.same([row.status, row.inserted, row.invalid, row.rows_total], ['completed', 3, 2, 5], 'the API: 3 new, 2 invalid of 5');
  const counts = await page.getByTestId('import-counts').textContent();
  t.match(counts, /New contacts3/, 'the page: 3 new contacts');
  t.match(counts, /Invalid rows2/, 'the page: 2 invalid rows');
  t.equal(await page.getByTestId('import-progress').textContent(), '5 rows done', 'the bar ends at every row');
  const lines = await page.getByTestId('import-errors').locator('tbody tr td:first-child').allTextContents();
  t.same(
    lines,
    row.errors.map((e: { line: number }) => String(e.line)),
    'the invalid rows by line, as the API lists them',
  );
  t.same(lines, ['3', '5'], 'lines 3 and 5');
  const download = await page.request.get(`${dev.origin}/api/v1/contacts/imports/${id}/errors.csv`);
  t.equal(download.status(), 200, 'the errors file downloads with the session');
  t.equal((await download.text()).trim().split('\n').length, 3, 'its header and the 2 invalid rows');
  t.equal(await page.getByRole('link', { name: 'Download every invalid row (CSV)' }).count(), 1, 'the page links to it');
  t.same(await accessibilityViolations(page), [], 'an import: no serious or critical violation');
  await screenshot(page, 'import');

  await page.getByRole('navigation', { name: 'Audiences' }).getByRole('link', { name: 'Lists', exact: true }).click();
  const listRow = page.getByTestId('list-row').filter({ hasText: 'Customers' });
  await listRow.waitFor();
  const apiList = (await api(acme, 'GET', `/lists/${customers.id}`)).data;
  t.equal(apiList.member_count, 3, 'the API: the 3 imported are members');
  t.match(await listRow.textContent(), /3 members/, 'the lists page: 3 members');
  t.same(await accessibilityViolations(page), [], 'lists: no serious or critical violation');
  await screenshot(page, 'lists');

  await listRow.getByRole('link', { name: 'Customers' }).click();
  await page.getByTestId('member-count').getByText('3 members').waitFor();
  t.same(
    (await page.getByTestId('member-row').locator('td:first-child').allTextContents()).sort(),
    ['new1@example.com', 'new2@example.com', 'new3@example.com'],
    'the members are the rows imported',
  );
  await page.getByLabel('Addresses of contacts').fill('person001@example.com, nobody@example.com');
  await page.getByRole('button', { name: 'Add to list' }).click();
  t.match(await page.getByRole('status').filter({ hasText: 'added' }).first().textContent(), /1 added, 1 not found/, 'what became of each address');
  await page.getByTestId('member-count').getByText('4 members').waitFor();
  t.equal((await api(acme, 'GET', `/lists/${customers.id}`)).data.member_count, 4, 'the API agrees: 4 members');
  t.same(await accessibilityViolations(page), [], 'a list: no serious or critical violation');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test('contacts: the total, search, status filter and paging equal the API; a contact, its history, erasure', async (t) => {
  const { page, problems, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/audiences/contacts`);
  const total = (await api(acme, 'GET', '/contacts?limit=1')).data.total as number;
  t.equal(total, 123, 'the API: 120 seeded and 3 imported');
  await page.getByTestId('contact-count').getByText('123 contacts; showing 1–50').waitFor();
  t.equal(await page.getByTestId('contact-row').count(), 50, 'a page of 50');
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByTestId('contact-count').getByText('123 contacts; showing 51–100').waitFor();
  t.match(page.url(), /offset=50/, 'the page is in the address');
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByTestId('contact-count').getByText('123 contacts; showing 101–123').waitFor();
  t.equal(await page.getByTestId('contact-row').count(), 23, 'the last page holds the rest');
  t.equal(await page.getByRole('button', { name: 'Next page' }).isDisabled(), true, 'and has no next page');
  t.same(await accessibilityViolations(page), [], 'contacts: no serious or critical violation');
  await screenshot(page, 'contacts');

  await page.getByLabel('Address contains').fill('PERSON00');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByTestId('contact-count').getByText('10 contacts match').waitFor();
  t.equal((await api(acme, 'GET', '/contacts?q=person00')).data.total, 10, 'the API finds the same 10');
  await page.getByLabel('Status').selectOption('unsubscribed');
  await page.getByTestId('contact-count').getByText('1 contact match').waitFor();
  t.same(await page.getByTestId('contact-row').locator('td:first-child').allTextContents(), ['person007@example.com'], 'the unsubscribed one');

  await page.getByLabel('Address contains').fill('person001@');
  await page.getByLabel('Status').selectOption('default');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('link', { name: 'person001@example.com' }).click();
  await page.getByRole('heading', { name: 'person001@example.com', level: 1 }).waitFor();
  t.match(await page.getByTestId('contact-profile').textContent(), /First namePerson/, 'the profile');
  await page.getByTestId('contact-events').waitFor();
  const events = (await api(acme, 'GET', '/events?recipient=person001@example.com')).data as { type: string }[];
  t.same(
    await page.getByTestId('contact-events').locator('li strong').allTextContents(),
    events.map((e) => e.type),
    'the history is the events of its address, newest first',
  );
  t.ok(
    events.some((e) => e.type === 'delivered'),
    'among them the delivery',
  );
  t.same(await accessibilityViolations(page), [], 'a contact: no serious or critical violation');
  await screenshot(page, 'contact');

  await page.getByRole('button', { name: 'Erase contact' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Erase contact' }).click();
  await page.getByRole('heading', { name: 'Erased contact', level: 1 }).waitFor();
  const id = page.url().split('/').pop()!;
  const erased = (await api(acme, 'GET', `/contacts/${id}`)).data;
  t.same([erased.email, erased.status], [null, 'deleted'], 'the API: erased');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test("another workspace's contact reads as Not found", async (t) => {
  const { page, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/audiences/contacts/${otherContact.id}`);
  await page.getByRole('alert').getByText('Not found', { exact: true }).waitFor();
  t.equal(await page.getByRole('alert').locator('p').textContent(), 'contact not found', "the API's 404, as it wrote it");
});

t.test('phone width and the dark theme: contacts and an import fit, with no violation', async (t) => {
  const phone = await newUser(browser, { width: 390, height: 844, colorScheme: 'dark', storageState: session });
  t.teardown(() => phone.context.close());
  await phone.page.goto(`${dev.origin}/app/audiences/contacts`);
  await phone.page.getByTestId('contact-row').first().waitFor();
  t.ok(await phone.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'contacts: nothing wider than the screen');
  t.same(await accessibilityViolations(phone.page), [], 'contacts, dark: no serious or critical violation');
  await screenshot(phone.page, 'contacts-phone-dark');
  await phone.page.goto(`${dev.origin}/app/audiences/imports`);
  await phone.page.getByTestId('import-row').first().waitFor();
  t.ok(await phone.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'imports: nothing wider either');
  t.same(await accessibilityViolations(phone.page), [], 'imports, dark: no serious or critical violation');
  t.same(unexpected(phone.problems.list), []);
});

t.test('a segment built in the page: its live count equals the API count of the same definition, saved and counted', async (t) => {
  const { page, problems, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/audiences/segments`);
  await page.getByRole('link', { name: 'New segment' }).click();
  await page.getByTestId('live-count').getByText('Finish the rules to count.').waitFor();
  await page.getByLabel('Rule 1 value').fill('person00');
  await page.getByRole('button', { name: 'Add a rule' }).click();
  await page.getByLabel('Rule 2 field').selectOption({ label: 'First name' });
  await page.getByLabel('Rule 2 comparison').selectOption({ label: 'is' });
  await page.getByLabel('Rule 2 value').fill('Person');
  const definition = {
    op: 'AND',
    rules: [
      { type: 'field', field: 'email', operator: 'contains', value: 'person00' },
      { type: 'field', field: 'first_name', operator: 'eq', value: 'Person' },
    ],
  };
  const preview = (await api(acme, 'POST', '/segments/preview', { definition })).data.count as number;
  t.equal(preview, 9, 'the API: person000…009 but the erased one');
  await page.getByTestId('live-count').getByText(`${preview} contacts match now`).waitFor();
  t.pass('the live count is the API count');
  await page.getByLabel('Contacts who match').selectOption('OR');
  const any = (await api(acme, 'POST', '/segments/preview', { definition: { ...definition, op: 'OR' } })).data.count as number;
  await page.getByTestId('live-count').getByText(`${any} contacts match now`).waitFor();
  t.ok(any > preview, 'any of the rules: more, as the API counts them');
  await page.getByLabel('Contacts who match').selectOption('AND');
  await page.getByLabel('Segment name').fill('Early people');
  await page.getByRole('button', { name: 'Create segment' }).click();
  await page.waitForURL(/\/app\/audiences\/segments\/[0-9a-f-]{36}$/);
  const id = page.url().split('/').pop()!;
  t.same((await api(acme, 'GET', `/segments/${id}`)).data.definition, definition, 'the API stored the definition built');
  await page.getByTestId('live-count').getByText(`${preview} contacts match now`).waitFor();
  t.same(await accessibilityViolations(page), [], 'the segment builder: no serious or critical violation');
  await screenshot(page, 'segment');
  await page.getByRole('navigation', { name: 'Audiences' }).getByRole('link', { name: 'Segments' }).click();
  await page.getByRole('button', { name: 'Count Early people' }).click();
  const count = (await api(acme, 'GET', `/segments/${id}/count`)).data.count as number;
  await page.getByTestId('segment-row').getByText(`${count} contacts`).waitFor();
  t.equal(count, preview, 'the saved segment counts the same');
  t.same(await accessibilityViolations(page), [], 'segments: no serious or critical violation');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test('suppressions: added in bulk (each outcome said), searched, filtered and lifted, as the API lists them', async (t) => {
  const { page, problems, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/audiences/suppressions`);
  await page.getByTestId('suppression-count').waitFor();
  const before = (await api(acme, 'GET', '/suppressions?limit=1')).total as number;
  await page.getByLabel('Addresses to suppress').fill('stop1@example.com, stop2@example.com not-an-address');
  await page.getByRole('button', { name: 'Suppress', exact: true }).click();
  await page.getByText('2 added, 0 already suppressed, 1 invalid').waitFor();
  const total = (await api(acme, 'GET', '/suppressions?limit=1')).total as number;
  t.equal(total, before + 2, 'the API: 2 more');
  await page.getByTestId('suppression-count').getByText(`${total} addresses`).waitFor();
  await page.getByLabel('Reason').selectOption('manual');
  await page.getByTestId('suppression-count').getByText('2 addresses').waitFor();
  await page.getByLabel('Address contains').fill('stop2');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByTestId('suppression-count').getByText('1 address').waitFor();
  t.same(await accessibilityViolations(page), [], 'suppressions: no serious or critical violation');
  await screenshot(page, 'suppressions');
  await page.getByRole('button', { name: 'Lift stop2@example.com' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Lift' }).click();
  await page.getByTestId('suppression-count').getByText('0 addresses').waitFor();
  t.equal((await api(acme, 'GET', '/suppressions?q=stop2')).total, 0, 'the API: lifted');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test('the custom-field catalog: a select field added with its options, changed and deleted, as the API lists them', async (t) => {
  const { page, problems, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/audiences/fields`);
  await page.getByRole('heading', { name: 'Custom fields', level: 1 }).waitFor();
  await page.getByText('No custom fields yet.').waitFor();
  await page.getByLabel('Key').fill('plan');
  await page.getByLabel('Label').fill('Plan');
  await page.getByLabel('Type').selectOption('select');
  await page.getByLabel('Options').fill('Gold, Silver');
  await page.getByRole('button', { name: 'Add field' }).click();
  const row = page.getByTestId('custom-field-row').filter({ hasText: 'plan' });
  await row.waitFor();
  const [stored] = (await api(acme, 'GET', '/contact-custom-fields')).data.items as { key: string; type: string; options: string[] }[];
  t.same([stored!.key, stored!.type, stored!.options], ['plan', 'select', ['Gold', 'Silver']], 'the API has the field with its options');
  t.match(await row.textContent(), /planPlanselectGold, Silverno/, 'the page shows it as stored');
  await page.getByLabel('Key').fill('Bad Key');
  await page.getByLabel('Label').fill('Bad');
  await page.getByRole('button', { name: 'Add field' }).click();
  await page.getByRole('alert').first().waitFor();
  t.match(await page.getByRole('alert').first().textContent(), /key/, "a bad key is refused in the API's words");

  await page.getByRole('button', { name: 'Change plan' }).click();
  const editor = page.getByTestId('field-editor');
  await editor.getByLabel('Options').fill('');
  await editor.getByRole('button', { name: 'Save field' }).click();
  await editor.getByRole('alert').waitFor();
  t.match(await editor.getByRole('alert').textContent(), /options/, "a select without options is refused in the API's words");
  await editor.getByLabel('Label').fill('Membership plan');
  await editor.getByLabel('Options').fill('Gold, Silver, Bronze');
  await editor.getByLabel('Position').fill('3');
  await editor.getByLabel('Every new contact must have a value').check();
  t.same(await accessibilityViolations(page), [], 'custom fields, one being changed: no serious or critical violation');
  await screenshot(page, 'custom-field-change');
  await editor.getByRole('button', { name: 'Save field' }).click();
  await editor.waitFor({ state: 'detached' });
  const [changed] = (await api(acme, 'GET', '/contact-custom-fields')).data.items as {
    label: string;
    options: string[];
    required: boolean;
    position: number;
  }[];
  t.same(
    [changed!.label, changed!.options, changed!.required, changed!.position],
    ['Membership plan', ['Gold', 'Silver', 'Bronze'], true, 3],
    'the API has the change',
  );
  await row.getByText('Membership plan').waitFor();
  t.match(await row.textContent(), /planMembership planselectGold, Silver, Bronzeyes/, 'the page shows it as changed');
  t.same(await accessibilityViolations(page), [], 'custom fields: no serious or critical violation');
  await screenshot(page, 'custom-fields');
  await page.getByRole('button', { name: 'Delete plan' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.getByText('No custom fields yet.').waitFor();
  t.same((await api(acme, 'GET', '/contact-custom-fields')).data.items, [], 'the API: deleted');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test('a session check the API refuses for now (429) is said with a retry, not taken for signed out', async (t) => {
  const { page, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  const refusal = { error: 'rate_limited', message: 'Too many requests for this account' };
  await page.route('**/api/v1/auth/session', (route) =>
    route.fulfill({ status: 429, headers: { 'retry-after': '7', 'content-type': 'application/json' }, body: JSON.stringify(refusal) }),
  );
  await page.goto(`${dev.origin}/app/audiences/contacts`);
  await page.getByRole('button', { name: 'Try again' }).waitFor();
  t.equal(await page.getByRole('alert').locator('p').textContent(), 'Too many requests for this account (try again in 7 s)', "the API's words and when");
  t.match(page.url(), /\/app\/audiences\/contacts$/, 'not sent to the sign-in page');
  await page.unroute('**/api/v1/auth/session');
  await page.getByRole('button', { name: 'Try again' }).click();
  await page.getByRole('heading', { name: 'Contacts', level: 1 }).waitFor();
  t.pass('once the API answers, the page it was going to');
});
