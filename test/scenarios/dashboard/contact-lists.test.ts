// A contact's lists on its page in a real Chromium against a real `mailpath dev`: the lists it was put in through the
// API, each linked to its list; added to a third and taken out of one from the page, each change read back from
// GET /contacts/{id}/lists. No serious accessibility violation, console error or CSP violation.
import t from 'tap';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { callDev, type SeededTenant, seedTenant, signIn } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

// The page and the assertions read the API many times in a minute (60 reads by default), which is not what this tests.
const dev = await startDevServer(t, mailpathArgs('dev'), {
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__READ: '100000',
  MAILPATH_CONFIG__LIMITS__RATE_LIMITS__PER_MINUTE__WRITE: '100000',
});
const browser = await launchBrowser(t);
// Chromium logs a 4xx of any resource as a console error (the favicon's 404 among them); answers the page gets from the
// API are checked on their own below, every one of them.
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));

async function api(tenant: SeededTenant, method: 'GET' | 'POST', path: string, body?: unknown) {
  const answer = await callDev(dev, method, path, tenant.key, body);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body as { data: any; total?: number };
}

type Entry = { id: string; name: string };

const acme = await seedTenant(dev, 'contactlists');
const contact = (await api(acme, 'POST', '/contacts', { email: 'ada@example.com', first_name: 'Ada' })).data as { id: string };
const list = async (name: string) => (await api(acme, 'POST', '/lists', { name })).data as Entry;
const [alpha, beta, gamma] = [await list('Alpha'), await list('Beta'), await list('Gamma')];
for (const l of [alpha, beta]) {
  const added = (await api(acme, 'POST', `/lists/${l.id}/members/batch`, { contact_ids: [contact.id] })).data;
  if (added.totals.added !== 1) throw new Error(`seeding ${l.name}: ${JSON.stringify(added)}`);
}

/** The contact's lists as the API answers them (one page holds them all here). */
async function apiLists(): Promise<{ items: Entry[]; total: number }> {
  const answer = await api(acme, 'GET', `/contacts/${contact.id}/lists?limit=200`);
  return { items: answer.data.map((l: Entry) => ({ id: l.id, name: l.name })), total: answer.total! };
}

t.test("a contact's lists: shown as the API lists them, added to and removed from on the page", async (t) => {
  // Signed in first in a browser of its own, so the page under test never sees the signed-out session check (401).
  const first = await newUser(browser);
  await signIn(first.page, dev, acme);
  const session = await first.context.storageState();
  await first.context.close();
  const { page, problems, context } = await newUser(browser, { storageState: session });
  t.teardown(() => context.close());
  const refused: string[] = [];
  page.on('response', (r) => {
    if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  await page.goto(`${dev.origin}/app/audiences/contacts/${contact.id}`);
  await page.getByRole('heading', { name: 'ada@example.com', level: 1 }).waitFor();
  const rows = page.getByTestId('contact-list-row');
  const shown = async () => {
    const links = rows.getByRole('link');
    const names = await links.allTextContents();
    const hrefs = await links.evaluateAll((as) => as.map((a) => a.getAttribute('href')));
    return names.map((name, i) => ({ name, href: hrefs[i] }));
  };
  const asLinks = (items: Entry[]) => items.map((l) => ({ name: l.name, href: `/app/audiences/lists/${l.id}` }));

  const seeded = await apiLists();
  t.same([seeded.items.map((l) => l.name).sort(), seeded.total], [['Alpha', 'Beta'], 2], 'the API: the two lists it was put in');
  await page.getByTestId('contact-list-count').getByText('In 2 lists').waitFor();
  t.same(await shown(), asLinks(seeded.items), "the page: exactly the API's lists, in its order, each linked to its list");
  t.same(await accessibilityViolations(page), [], 'a contact with its lists: no serious or critical violation');
  await screenshot(page, 'contact-lists');

  await page.getByLabel('List to add the contact to').selectOption({ label: 'Gamma' });
  await page.getByRole('button', { name: 'Add to list' }).click();
  await page.getByText('Added to Gamma.').waitFor();
  await page.getByTestId('contact-list-count').getByText('In 3 lists').waitFor();
  const three = await apiLists();
  t.same([three.items.map((l) => l.name).sort(), three.total], [['Alpha', 'Beta', 'Gamma'], 3], 'the API: three lists');
  t.same(await shown(), asLinks(three.items), 'the page shows the three');

  // Adding again changes nothing and says so.
  await page.getByLabel('List to add the contact to').selectOption({ label: 'Beta' });
  await page.getByRole('button', { name: 'Add to list' }).click();
  await page.getByText('Already in Beta.').waitFor();
  t.equal((await apiLists()).total, 3, 'the API: still three');

  await page.getByRole('button', { name: 'Remove from Alpha' }).click();
  await page.getByText('Removed from Alpha.').waitFor();
  await page.getByTestId('contact-list-count').getByText('In 2 lists').waitFor();
  const two = await apiLists();
  t.same([two.items.map((l) => l.id).sort(), two.total], [[beta.id, gamma.id].sort(), 2], 'the API: Beta and Gamma');
  t.same(await shown(), asLinks(two.items), 'the page shows the two left');
  t.equal((await api(acme, 'GET', `/lists/${alpha.id}`)).data.member_count, 0, "Alpha's member count follows");
  t.same(await accessibilityViolations(page), [], 'after the changes: no serious or critical violation');

  await rows.getByRole('link', { name: 'Gamma' }).click();
  await page.getByRole('heading', { name: 'Gamma', level: 1 }).waitFor();
  await page.getByTestId('member-row').first().waitFor();
  t.same(await page.getByTestId('member-row').getByRole('link').allTextContents(), ['ada@example.com'], "the list's page has the contact");
  t.same(refused, [], 'the API refused nothing the page asked');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});
