// The dashboard's settings in a real Chromium against a real `mailpath dev`: an API key made with chosen scopes and shown
// once, its page (activity, scopes changed, revoked: the key then gets 401); a viewer invited through the team page
// joins in a second browser and finds no key form, the API refusing a forced write (403); the default sender's refusal
// in the API's words; the audit log listing the key and the invite, a saved filter round trip, the CSV and PDF
// downloads. No page has a serious accessibility violation, a console error or a CSP violation.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { Agent, fetch } from 'undici';
import type { Page } from 'playwright-core';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { startDevServer } from '../../helpers/dev-server.js';

const dev = await startDevServer(t, mailpathArgs('dev'));
const browser = await launchBrowser(t);
const unique = Math.random().toString(36).slice(2, 8);
const owner = { email: `owner-${unique}@acme.localhost`, password: 'Correct-horse-42' };
const viewer = { email: `viewer-${unique}@acme.localhost`, password: 'Viewer-horse-42' };
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

/** The API over HTTPS as a client would call it (the dev server's certificate is self-signed). */
async function apiCall(method: string, path: string, token: string | undefined, body?: unknown) {
  const res = await fetch(`${dev.origin}/api/v1${path}`, {
    method,
    dispatcher: insecure,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const registered = await apiCall('POST', '/auth/register', undefined, {
  tenant_name: 'Acme Settings',
  tenant_slug: `acme-${unique}`,
  email: owner.email,
  password: owner.password,
});
if (registered.status !== 201) throw new Error(`register: ${registered.status} ${JSON.stringify(registered.body)}`);
const ownerToken: string = registered.body.data.token;

/** A 4xx the page shows the user (a viewer refused) logs a console line too: that one is expected. */
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));

async function signIn(page: Page, who: { email: string; password: string }, next: string) {
  await page.goto(`${dev.origin}/app/sign-in?next=${encodeURIComponent(next)}`);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill(who.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${dev.origin}${next}`);
}

const ownerBrowser = await newUser(browser);
t.teardown(() => ownerBrowser.context.close());
const { page } = ownerBrowser;
await signIn(page, owner, '/app/settings/keys');

t.test('an API key: scopes picked, shown once, its page, scopes changed, revoked', async (t) => {
  await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  t.equal(
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).getAttribute('aria-current'),
    'page',
    'Settings is the current main entry',
  );
  t.ok(await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Your account' }).isVisible(), 'the account page is reachable');
  await page.getByLabel('Name').fill('CI deploy');
  await page.getByRole('radio', { name: /^Test:/ }).check();
  const scopes = page.getByRole('group', { name: 'Scopes' });
  await scopes.getByRole('checkbox', { name: 'templates:write' }).check();
  await scopes.getByRole('checkbox', { name: 'campaigns:read' }).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.getByTestId('new-key').getByTestId('secret').textContent())!;
  t.match(secret, /^\S{24,}$/, 'the whole key is shown');
  t.same(await accessibilityViolations(page), [], 'keys, a key just made: no serious or critical violation');
  await screenshot(page, 'keys');

  const listed = (await apiCall('GET', '/api-keys', ownerToken)).body.data.items.find((k: { name: string }) => k.name === 'CI deploy');
  t.same(listed.scopes, ['campaigns:read', 'templates:write'], 'the picked scopes are the key’s');
  t.equal(listed.mode, 'test');
  t.equal((await apiCall('GET', '/whoami', secret)).status, 200, 'the key works');
  t.ok(secret.startsWith(listed.prefix), 'its prefix is the start of the key');

  await page.reload();
  await page.getByTestId('key-prefix').first().waitFor();
  t.equal(await page.getByTestId('secret').count(), 0, 'after a reload the key is not shown again');
  t.same(await page.getByTestId('key-prefix').allTextContents(), [`${listed.prefix}…`], 'only its prefix');

  await page.getByRole('link', { name: 'CI deploy' }).click();
  await page.getByRole('heading', { level: 1, name: 'Key “CI deploy”' }).waitFor();
  await page.getByTestId('rate-limit-status').waitFor();
  t.ok(await page.getByRole('img', { name: /^Requests with CI deploy: \d+ in all over 30 days/ }).isVisible(), 'the 30-day sparkline, its totals as its name');
  t.same(await accessibilityViolations(page), [], 'a key’s page: no serious or critical violation');
  await screenshot(page, 'key');
  await page.getByRole('group', { name: 'Scopes of this key' }).getByRole('checkbox', { name: 'lists:read' }).check();
  await page.getByRole('button', { name: 'Save scopes' }).click();
  await page.getByText('Scopes saved').waitFor();
  const changed = (await apiCall('GET', '/api-keys', ownerToken)).body.data.items.find((k: { id: string }) => k.id === listed.id);
  t.same(changed.scopes, ['campaigns:read', 'lists:read', 'templates:write'], 'the scopes changed in place');

  await page.getByRole('button', { name: 'Revoke key' }).click();
  const dialog = page.getByRole('dialog', { name: 'Revoke “CI deploy”?' });
  await dialog.waitFor();
  t.equal(await page.evaluate<string>("document.activeElement?.textContent ?? ''"), 'Cancel', 'the dialog opens on the safe choice');
  t.same(await accessibilityViolations(page), [], 'the confirmation dialog: no serious or critical violation');
  await page.keyboard.press('Escape');
  t.notOk(await dialog.isVisible(), 'Escape closes it');
  t.equal(await page.evaluate<string>("document.activeElement?.textContent ?? ''"), 'Revoke key', 'focus returns to the button');
  await page.getByRole('button', { name: 'Revoke key' }).click();
  await dialog.getByRole('button', { name: 'Revoke key' }).click();
  await page.waitForURL(`${dev.origin}/app/settings/keys`);
  await page.getByText('No keys yet.').waitFor();
  t.equal((await apiCall('GET', '/whoami', secret)).status, 401, 'the revoked key gets 401');
  t.same(unexpected(ownerBrowser.problems.list), [], 'no console error or CSP violation');
});

let acceptLink = '';
t.test('team: a viewer invited through the page', async (t) => {
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Team' }).click();
  await page.getByRole('heading', { level: 1, name: 'Team' }).waitFor();
  await page.getByLabel('Email').fill(viewer.email);
  await page.getByRole('radio', { name: /^viewer:/ }).check();
  await page.getByRole('button', { name: 'Send invite' }).click();
  acceptLink = (await page.getByTestId('invite-sent').getByTestId('secret').textContent())!;
  t.match(acceptLink, `${dev.origin}/app/accept-invite?token=`, 'the accept link, on the dashboard, shown once');
  const pending = page.getByRole('table', { name: 'Pending invites' });
  await pending.getByRole('row', { name: new RegExp(viewer.email) }).waitFor();
  t.match(await pending.getByRole('row', { name: new RegExp(viewer.email) }).textContent(), 'viewer', 'pending, as a viewer');
  t.same(await accessibilityViolations(page), [], 'team: no serious or critical violation');
  await screenshot(page, 'team');
  // The last owner stays: the API's refusal is shown as it words it.
  const me = page.getByRole('row', { name: new RegExp(owner.email) });
  await me.getByLabel(`Role of ${owner.email}`, { exact: true }).selectOption('admin');
  await me.getByRole('button', { name: `Save the role of ${owner.email}` }).click();
  t.match(await page.getByRole('alert').first().textContent(), /owner/i, "demoting the last owner: the API's refusal");
});

t.test('the viewer joins in another browser: no key form, a forced write refused', async (t) => {
  const second = await newUser(browser, { width: 390, height: 844 });
  t.teardown(() => second.context.close());
  const vp = second.page;
  await vp.goto(acceptLink);
  await vp.getByLabel('Choose a password').fill(viewer.password);
  t.same(await accessibilityViolations(vp), [], 'accept an invite: no serious or critical violation');
  await screenshot(vp, 'accept-invite');
  await vp.getByRole('button', { name: 'Join' }).click();
  await vp.waitForURL(`${dev.origin}/app/`);
  await vp.goto(`${dev.origin}/app/settings/keys`);
  await vp.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  await vp.getByText('can see keys but not make or change them').waitFor();
  t.equal(await vp.getByRole('form', { name: 'Create a key' }).count(), 0, 'no create-key form for a viewer');
  t.ok(await vp.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'nothing wider than a phone screen');
  const forced = await vp.evaluate(async () => {
    const session = (await (await fetch('/api/v1/auth/session')).json()) as { data: { csrf_token: string } };
    const res = await fetch('/api/v1/api-keys', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': session.data.csrf_token },
      body: JSON.stringify({ name: 'sneaky' }),
    });
    return { status: res.status, body: (await res.json()) as { message: string } };
  });
  t.equal(forced.status, 403, 'a forced POST from the page is refused');
  t.match(forced.body.message, 'needs the developer role', 'in the API’s words');
  t.same(await accessibilityViolations(vp), [], 'keys as a viewer at phone width: no serious or critical violation');

  await vp.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Audit log' }).click();
  t.match(await vp.getByRole('alert').textContent(), 'needs the owner role', "the audit log: the API's refusal shown");
  t.equal(await vp.getByRole('button', { name: 'Download PDF' }).count(), 0, 'no exports for a viewer');
  t.same(unexpected(second.problems.list), [], 'no console error or CSP violation');

  await page.reload();
  const row = page.getByRole('row', { name: new RegExp(viewer.email) }).first();
  await row.waitFor();
  await row.getByLabel(`Role of ${viewer.email}`, { exact: true }).selectOption('developer');
  await row.getByRole('button', { name: `Save the role of ${viewer.email}` }).click();
  await page.waitForResponse((r) => r.url().endsWith('/api/v1/team/members') && r.request().method() === 'GET');
  const members = (await apiCall('GET', '/team/members', ownerToken)).body.data.items;
  t.equal(members.find((m: { email: string }) => m.email === viewer.email).role, 'developer', 'an owner changes a role');
});

t.test('default sender: refused for an unverified domain, set, cleared', async (t) => {
  await page.goto(`${dev.origin}/app/settings/sender`);
  await page.getByRole('heading', { level: 1, name: 'Default sender' }).waitFor();
  await page.getByTestId('sender-current').waitFor();
  await page.getByLabel('From address').fill('news@unverified.example');
  await page.getByLabel('From name').fill('Acme News');
  await page.getByRole('button', { name: 'Save default sender' }).click();
  t.match(await page.getByRole('alert').first().textContent(), /from_email/, 'refused, naming the field, in the API’s words');
  t.same(await accessibilityViolations(page), [], 'sender, refused: no serious or critical violation');

  // A verified domain: `mailpath dev` answers *.localhost with the records Mailpath asks to publish.
  const domain = `news-${unique}.localhost`;
  const created = await apiCall('POST', '/domains', ownerToken, { name: domain });
  t.equal(created.status, 201, 'a domain is added');
  const verified = await apiCall('POST', `/domains/${created.body.data.id}/verify`, ownerToken);
  t.equal(verified.status, 200, `and verified: ${JSON.stringify(verified.body).slice(0, 300)}`);
  await page.reload();
  await page.getByText('derived from your oldest verified sending domain').waitFor();
  await page.getByLabel('From address').fill(`hello@${domain}`);
  await page.getByLabel('From name').fill('Acme News');
  await page.getByRole('button', { name: 'Save default sender' }).click();
  await page.getByText('Default sender saved').waitFor();
  t.match(await page.getByTestId('sender-current').textContent(), `Acme News <hello@${domain}>`, 'the default in force');
  t.match((await apiCall('GET', '/settings/sender', ownerToken)).body.data, { from_email: `hello@${domain}`, from_name: 'Acme News', source: 'settings' });
  t.same(await accessibilityViolations(page), [], 'sender, set: no serious or critical violation');
  await screenshot(page, 'sender');
  await page.getByRole('button', { name: 'Clear the default sender' }).click();
  await page.getByRole('dialog', { name: 'Clear the default sender?' }).getByRole('button', { name: 'Clear' }).click();
  await page.getByText('Default sender cleared').waitFor();
  t.equal((await apiCall('GET', '/settings/sender', ownerToken)).body.data.source, 'derived', 'cleared: the derived default again');
});

t.test('audit log: the key and the invite listed, a saved filter, CSV and PDF downloads', async (t) => {
  await page.goto(`${dev.origin}/app/settings/audit`);
  const table = page.getByTestId('audit-table');
  await table.getByText('api_key.created').waitFor();
  t.ok(await table.getByText('team.invite_created').isVisible(), 'the invite is listed');
  t.ok(await table.getByText('api_key.revoked').isVisible(), 'and the revocation');
  t.same(await accessibilityViolations(page), [], 'audit: no serious or critical violation');
  await screenshot(page, 'audit');

  await page.getByLabel('Action', { exact: true }).fill('api_key.');
  await page.getByRole('button', { name: 'Apply filters' }).click();
  await table.getByText('team.invite_created').waitFor({ state: 'detached' });
  const actions = (await table.locator('tbody tr td:nth-child(2) code').allTextContents()).sort();
  t.same([...new Set(actions)], ['api_key.created', 'api_key.revoked', 'api_key.scopes_changed'], 'the action filter');

  await page.getByLabel('Name for the current filters').fill('Key changes');
  await page.getByRole('button', { name: 'Save filters' }).click();
  await page.getByRole('button', { name: 'Apply the filter Key changes' }).waitFor();
  const saved = (await apiCall('GET', '/audit-filters', ownerToken)).body.data.items;
  t.same(
    saved.map((f: { name: string; definition: unknown }) => [f.name, f.definition]),
    [['Key changes', { event_type: 'api_key.' }]],
    'saved as the page state the API keeps',
  );
  await page.reload();
  await table.getByText('team.invite_created').waitFor();
  await page.getByRole('button', { name: 'Apply the filter Key changes' }).click();
  await table.getByText('team.invite_created').waitFor({ state: 'detached' });
  t.equal(await page.getByLabel('Action', { exact: true }).inputValue(), 'api_key.', 'after a reload the saved filter applies its action');
  t.ok(await table.getByText('api_key.created').isVisible(), 'and filters the rows');

  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
  t.match(csv.suggestedFilename(), /^audit-events-acme-.*\.csv$/);
  const text = readFileSync((await csv.path())!, 'utf8');
  t.match(text.split('\r\n')[0], 'id,time,action,actor_type', 'the CSV header');
  t.match(text, 'api_key.created', 'and the rows');
  t.match(text, 'team.invite_created');
  const [pdf] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download PDF' }).click()]);
  t.equal(
    readFileSync((await pdf.path())!)
      .subarray(0, 5)
      .toString(),
    '%PDF-',
    'the owner’s PDF export',
  );

  await page.getByRole('button', { name: 'Delete the filter Key changes' }).click();
  await page.getByRole('button', { name: 'Apply the filter Key changes' }).waitFor({ state: 'detached' });
  t.pass('a saved filter is deleted');
  t.same(unexpected(ownerBrowser.problems.list), [], 'no console error or CSP violation');
});

t.test('dark theme at phone width: the audit log and the keys page', async (t) => {
  const dark = await newUser(browser, { colorScheme: 'dark', width: 390, height: 844 });
  t.teardown(() => dark.context.close());
  await signIn(dark.page, owner, '/app/settings/audit');
  await dark.page.getByTestId('audit-table').waitFor();
  t.ok(await dark.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'the wide table scrolls in its region, not the page');
  t.same(await accessibilityViolations(dark.page), [], 'audit, dark: no contrast or other serious violation');
  await dark.page.goto(`${dev.origin}/app/settings/keys`);
  await dark.page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
  t.same(await accessibilityViolations(dark.page), [], 'keys, dark: no serious violation');
  await screenshot(dark.page, 'keys-dark');
  t.same(unexpected(dark.problems.list), []);
});
