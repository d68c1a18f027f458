// The MD5 suppression list pages in a real Chromium against a real `mailpath dev`, every figure checked against the
// API: lists a page at a time, one made in the page and filled from a file with bad lines and from pasted hashes (the
// counts shown are the API's answer, the entry count read back), a file over the size limit refused in the API's words;
// the list attached to a draft from the campaign's page, the campaign sent and the one recipient on the list skipped;
// a cancelled campaign's list change refused as the API refuses it; the list deleted behind a confirmation; another
// workspace's list reads as "Not found". No serious accessibility violation, console error or CSP violation.
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { Agent, request } from 'undici';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { callDev, type SeededTenant, seedTenant, signIn } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

/** The largest upload the dev server takes here: small, so a file over it is small too. */
const MAX_FILE_BYTES = 2048;
// One owner signs in and makes more reads and writes in a minute than the default allowance, which is not what this tests.
const dev = await startDevServer(t, mailpathArgs('dev'), {
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: '100000',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '100000',
  MAILPATH_CONFIG__LIMITS__IMPORTS__MAX_FILE_BYTES: String(MAX_FILE_BYTES),
});
const browser = await launchBrowser(t);
// The refusals the pages show (413, 404, 409) are logged by Chromium as failed loads: those are expected.
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));
const insecure = new Agent({ connect: { rejectUnauthorized: false } });
const md5 = (text: string) => createHash('md5').update(text).digest('hex');

async function api(tenant: SeededTenant, method: 'GET' | 'POST', path: string, body?: unknown) {
  const answer = await callDev(dev, method, path, tenant.key, body);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as { data: any; total?: number; next_cursor?: string | null };
}

/** A request callDev does not make (PATCH, a text body): its status and error envelope. */
async function raw(tenant: SeededTenant, method: 'PATCH' | 'POST', path: string, type: string, body: string) {
  const res = await request(`${dev.origin}/api/v1${path}`, {
    method,
    dispatcher: insecure,
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': type },
    body,
  });
  return { status: res.statusCode, body: (await res.body.json()) as { message?: string; data?: any } };
}

const acme = await seedTenant(dev, 'md5');
const other = await seedTenant(dev, 'elsewhere');
// 50 lists made before the page makes one: a page of 50, and the 51st on the next.
for (let i = 0; i < 50; i++) await api(acme, 'POST', '/md5-lists', { name: `Older list ${String(i).padStart(2, '0')}` });
const otherList = (await api(other, 'POST', '/md5-lists', { name: 'Not yours' })).data as { id: string };
// Three recipients; Bob's hash is in the file uploaded below.
const buyers = (await api(acme, 'POST', '/lists', { name: 'Buyers' })).data as { id: string };
const people = ['ann@example.com', 'Bob@Example.com', 'cat@example.com'];
for (const email of people) await api(acme, 'POST', '/contacts', { email });
await api(acme, 'POST', `/lists/${buyers.id}/members/batch`, { emails: people });
const draft = (await api(acme, 'POST', '/campaigns', { name: 'Spring offer', list_id: buyers.id, subject: 'Spring', body_text: 'Hello.' })).data as {
  id: string;
};
const session = await (async () => {
  const first = await newUser(browser);
  await signIn(first.page, dev, acme);
  const state = await first.context.storageState();
  await first.context.close();
  return state;
})();

/** The words the list page writes for an upload's answer, from the API's own counts. */
function uploadWords(r: { added: number; duplicates: number; invalid: number; invalid_lines: number[] }): string {
  const invalid = `${r.invalid} invalid line${r.invalid === 1 ? '' : 's'}`;
  const lines = r.invalid_lines.length ? ` (line${r.invalid_lines.length === 1 ? '' : 's'} ${r.invalid_lines.join(', ')})` : '';
  return `${r.added} added, ${r.duplicates} already in the list or repeated, ${invalid}${lines}.`;
}

t.test('an MD5 list made, filled and attached in the pages; the campaign skips the recipient on it; deleted', async (t) => {
  const { page, problems, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/`);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audiences' }).click();
  await page.getByRole('navigation', { name: 'Audiences' }).getByRole('link', { name: 'MD5 lists' }).click();
  await page.getByTestId('md5-list-count').getByText('50 lists', { exact: true }).waitFor();
  await page.getByLabel('Name').fill('Advertiser X');
  await page.getByRole('button', { name: 'Add MD5 list' }).click();
  await page.getByTestId('md5-list-count').getByText('51 lists; page 1').waitFor();
  const listed = await api(acme, 'GET', '/md5-lists?limit=50');
  t.equal(listed.total, 51, 'the API: 51 lists');
  const made = listed.data[0];
  t.equal(made.name, 'Advertiser X', 'the newest is the one made in the page');
  t.same(
    await page.getByTestId('md5-list-row').locator('td:first-child').allTextContents(),
    listed.data.map((l: { name: string }) => l.name),
    'the first page: the API’s first 50, newest first',
  );
  t.match(await page.getByTestId('md5-list-row').first().textContent(), /Advertiser X0 hashes/, 'with its entry count');
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByTestId('md5-list-count').getByText('51 lists; page 2').waitFor();
  const pageTwo = await api(acme, 'GET', `/md5-lists?limit=50&after=${encodeURIComponent(listed.next_cursor!)}`);
  t.same(
    await page.getByTestId('md5-list-row').locator('td:first-child').allTextContents(),
    pageTwo.data.map((l: { name: string }) => l.name),
    'the second page: the API’s next one, the oldest',
  );
  await page.getByRole('button', { name: 'Previous page' }).click();
  await page.getByTestId('md5-list-count').getByText('51 lists; page 1').waitFor();
  t.same(await accessibilityViolations(page), [], 'MD5 lists: no serious or critical violation');
  await screenshot(page, 'md5-lists');

  await page.getByRole('link', { name: 'Advertiser X' }).click();
  await page.getByRole('heading', { name: 'Advertiser X', level: 1 }).waitFor();
  t.equal(await page.getByTestId('entry-count').textContent(), '0 hashes', 'a new list holds nothing');
  // Lines 3 and 6 are not hashes, 4 is blank (skipped), 5 repeats line 1 in lower case.
  const file = join(dev.dataDir, 'suppression.txt');
  const bob = md5('bob@example.com');
  writeFileSync(file, [bob.toUpperCase(), md5('someone@else.example'), 'not-a-hash', '', bob, 'z'.repeat(32), md5('x@y.example'), ''].join('\n'));
  // The API's answer to each upload, from a twin list given the same bodies in the same order (Chromium's DevTools
  // protocol does not hand over the page's own copy of an answer), in the other workspace so this one's count holds.
  const twin = (await api(other, 'POST', '/md5-lists', { name: 'Twin' })).data as { id: string };
  const answerTo = async (body: string) => (await raw(other, 'POST', `/md5-lists/${twin.id}/entries`, 'text/plain', body)).body.data;
  const first = await answerTo(readFileSync(file, 'utf8'));
  t.same(first, { added: 3, duplicates: 1, invalid: 2, invalid_lines: [3, 6] }, 'the API: 3 added, 1 repeated, lines 3 and 6 invalid');
  await page.getByLabel('File of hashes (.txt or .csv)').setInputFiles(file);
  await page.getByRole('button', { name: 'Upload hashes' }).click();
  const result = page.getByRole('status').filter({ hasText: 'Uploaded' });
  await result.waitFor();
  t.equal(await result.locator('p').textContent(), uploadWords(first), 'the page: the API’s counts and lines');
  await page.getByTestId('entry-count').getByText('3 hashes').waitFor();
  t.equal((await api(acme, 'GET', `/md5-lists/${made.id}`)).data.entry_count, 3, 'the API reads back 3 hashes');

  const paste = `${md5('dan@example.com')}\n${bob}\n`;
  const second = await answerTo(paste);
  t.same(second, { added: 1, duplicates: 1, invalid: 0, invalid_lines: [] }, 'the API: pasted, 1 added and 1 already in');
  await page.getByLabel('Or paste hashes').fill(paste);
  await page.getByRole('button', { name: 'Upload hashes' }).click();
  await result.getByText(uploadWords(second)).waitFor();
  await page.getByTestId('entry-count').getByText('4 hashes').waitFor();
  t.equal((await api(acme, 'GET', `/md5-lists/${made.id}`)).data.entry_count, 4, 'the API reads back 4');

  const big = `${Array.from({ length: 100 }, (_, i) => md5(`big${i}@example.com`)).join('\n')}\n`;
  t.ok(big.length > MAX_FILE_BYTES, 'a file over the limit');
  const refusal = await raw(acme, 'POST', `/md5-lists/${made.id}/entries`, 'text/plain', big);
  t.equal(refusal.status, 413, 'the API refuses it: 413');
  writeFileSync(file, big);
  await page.getByLabel('File of hashes (.txt or .csv)').setInputFiles(file);
  await page.getByRole('button', { name: 'Upload hashes' }).click();
  const alert = page.getByRole('alert');
  await alert.getByText('That did not work').waitFor();
  t.equal(await alert.locator('p').textContent(), refusal.body.message, 'the page: the API’s message, as it wrote it');
  t.equal((await api(acme, 'GET', `/md5-lists/${made.id}`)).data.entry_count, 4, 'nothing of it stored');
  t.same(await accessibilityViolations(page), [], 'an MD5 list: no serious or critical violation');
  await screenshot(page, 'md5-list');

  await page.goto(`${dev.origin}/app/campaigns/${draft.id}`);
  await page.getByTestId('md5-attached').getByText('No MD5 list').waitFor();
  await page.getByLabel('Skip the addresses on').selectOption({ label: 'Advertiser X (4 hashes)' });
  await page.getByRole('button', { name: 'Save MD5 list' }).click();
  await page.getByRole('status').filter({ hasText: 'MD5 list attached' }).waitFor();
  await page.getByTestId('md5-attached').getByText('Skips everyone on Advertiser X.').waitFor();
  t.equal((await api(acme, 'GET', `/campaigns/${draft.id}`)).data.md5_list_id, made.id, 'the API: the campaign has the list');
  t.same(await accessibilityViolations(page), [], 'a campaign with its MD5 list: no serious or critical violation');
  await screenshot(page, 'campaign-md5-list');

  await page.getByRole('button', { name: 'Send now' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Send now' }).click();
  let campaign = (await api(acme, 'GET', `/campaigns/${draft.id}`)).data;
  // Bounded: 60 reads, 500 ms apart.
  for (let i = 0; i < 60 && !(campaign.progress.targeting_complete && campaign.progress.remaining === 0); i++) {
    await new Promise((r) => setTimeout(r, 500));
    campaign = (await api(acme, 'GET', `/campaigns/${draft.id}`)).data;
  }
  t.same([campaign.progress.skipped.md5_listed, campaign.progress.skipped_total, campaign.progress.queued], [1, 1, 2], 'the API: Bob skipped, 2 sent');
  await page.getByTestId('md5-skipped').getByText('1 recipient skipped for being on it.').waitFor({ timeout: 30_000 });
  t.notOk(await page.getByLabel('Skip the addresses on').isVisible(), 'a started campaign’s list is not changed any more');

  await page.goto(`${dev.origin}/app/audiences/md5-lists`);
  const row = page.getByTestId('md5-list-row').filter({ hasText: 'Advertiser X' });
  await row.getByRole('button', { name: 'Delete Advertiser X' }).click();
  await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
  await page.getByTestId('md5-list-count').getByText('50 lists', { exact: true }).waitFor();
  t.equal(await row.count(), 0, 'gone from the page');
  t.equal((await callDev(dev, 'GET', `/md5-lists/${made.id}`, acme.key)).status, 404, 'the API: gone');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test('a cancelled campaign’s MD5 list: the change refused in the API’s words', async (t) => {
  const { page, problems, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  const list = (await api(acme, 'POST', '/md5-lists', { name: 'Late list' })).data as { id: string };
  const late = (await api(acme, 'POST', '/campaigns', { name: 'Too late', list_id: buyers.id, subject: 'Late', body_text: 'Hello.' })).data as { id: string };
  await page.goto(`${dev.origin}/app/campaigns/${late.id}`);
  await page.getByLabel('Skip the addresses on').selectOption({ label: 'Late list (0 hashes)' });
  // Cancelled elsewhere while this page still shows the draft.
  await api(acme, 'POST', `/campaigns/${late.id}/cancel`);
  const refusal = await raw(acme, 'PATCH', `/campaigns/${late.id}/md5-list`, 'application/json', JSON.stringify({ list_id: list.id }));
  t.equal(refusal.status, 409, 'the API refuses it: 409');
  await page.getByRole('button', { name: 'Save MD5 list' }).click();
  const alert = page.getByRole('alert');
  await alert.getByText('That did not work').waitFor();
  t.equal(await alert.locator('p').textContent(), refusal.body.message, 'the page: the API’s message');
  t.equal((await api(acme, 'GET', `/campaigns/${late.id}`)).data.md5_list_id, null, 'no list attached');
  t.same(await accessibilityViolations(page), [], 'a refused change: no serious or critical violation');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test("another workspace's MD5 list reads as Not found", async (t) => {
  const { page, problems, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  t.equal((await callDev(dev, 'GET', `/md5-lists/${otherList.id}`, acme.key)).status, 404, 'the API: 404 for it');
  await page.goto(`${dev.origin}/app/audiences/md5-lists/${otherList.id}`);
  await page.getByRole('heading', { name: 'Not found', level: 1 }).waitFor();
  t.notOk(await page.getByText('Not yours').isVisible(), 'nothing of it shown');
  t.equal(await page.getByRole('button', { name: 'Upload hashes' }).count(), 0, 'nothing to upload to');
  t.same(await accessibilityViolations(page), [], 'not found: no serious or critical violation');
  await screenshot(page, 'md5-list-not-found');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});
