// Onboarding in a real Chromium against a real `mailpath dev`: register, land on the checklist, add a .localhost
// domain, copy its records and download them as a zone file, watch them verify (the dev DNS serves them), create a
// key shown once, send a test message that reaches the dev sink and follow it to delivered; a returning user sees the
// progress; rotate the domain's DKIM key from its page (a stale tab refused, a viewer without the button, another
// workspace not finding it); the domain page at phone width and in the dark theme. No serious accessibility
// violation, console error or CSP violation on any page.
import { readFileSync } from 'node:fs';
import t from 'tap';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { startDevServer } from '../../helpers/dev-server.js';

const dev = await startDevServer(t, mailpathArgs('dev'));
const browser = await launchBrowser(t);
const unique = Math.random().toString(36).slice(2, 8);
const owner = { name: 'Onboard Co', email: `owner-${unique}@onboard.localhost`, password: 'Correct-horse-42' };
const domainName = `send-${unique}.localhost`;

/** API refusals the page shows the user (a 401 from GET /auth/session when signed out) log a console line too. */
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));

interface SinkMessage {
  rcpt_to: string[] | string;
  subject: string | null;
  dkim: unknown;
}

/** The dev sink's catch, polled until `found` matches one (bounded: 60 tries, 250 ms apart). */
async function sinkMessage(found: (m: SinkMessage) => boolean): Promise<SinkMessage | undefined> {
  for (let i = 0; i < 60; i++) {
    const list = (await (await fetch(`${dev.inbox}/messages`)).json()) as SinkMessage[];
    const hit = list.find(found);
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 250));
  }
  return undefined;
}

t.test('register, add a domain, verify, create a key, send and see it delivered', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/register`);
  await page.getByLabel('Company or workspace name').fill(owner.name);
  await page.getByLabel('Workspace address').fill(`onboard-${unique}`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(`${dev.origin}/app/onboarding`);
  await page.getByTestId('progress').waitFor();
  t.equal(await page.getByTestId('progress').textContent(), '0 of 5 steps done', 'registration lands on the checklist, nothing done');
  t.same(await accessibilityViolations(page), [], 'onboarding, empty: no serious or critical violation');

  await page.getByLabel('Domain name').fill(domainName);
  await page.getByRole('button', { name: 'Add domain' }).click();
  // Adding a domain makes a 2048-bit RSA key: slow on a loaded machine.
  await page.getByTestId('record-dkim').waitFor({ timeout: 60_000 });
  const listed = await page.request.get(`${dev.origin}/api/v1/domains`);
  const domain = ((await listed.json()) as { data: { id: string; records: { kind: string; value: string; zone_line: string }[] }[] }).data[0]!;
  t.equal(domain.records.length, 4, 'four records to publish');
  for (const kind of ['spf', 'dkim', 'dmarc', 'mx']) t.ok(await page.getByTestId(`record-${kind}`).isVisible(), `the ${kind} record shows`);

  await page.getByRole('button', { name: 'Copy the DKIM value' }).click();
  const dkim = domain.records.find((r) => r.kind === 'dkim')!;
  t.equal(await page.evaluate('navigator.clipboard.readText()'), dkim.value, 'the copy button puts the DKIM value on the clipboard');

  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download zone file' }).click()]);
  t.equal(download.suggestedFilename(), `${domainName}.zone`, 'the zone file is named after the domain');
  const zone = readFileSync(await download.path(), 'utf8');
  for (const r of domain.records) t.ok(zone.includes(r.zone_line), `the zone file holds the ${r.kind} record`);

  // The page checks the DNS by itself: the dev DNS serves the records, so they turn verified without a click.
  await page.getByText(`All sending records verified: ${domainName} can send.`).waitFor({ timeout: 30_000 });
  t.equal(await page.getByTestId('record-dkim-state').textContent(), 'Verified', 'the DKIM record shows verified');
  t.equal(await page.getByTestId('step-2-state').textContent(), 'Done', 'the records step is done');

  await page.getByRole('button', { name: 'Create API key' }).click();
  const key = (await page.getByTestId('secret').textContent())!;
  t.match(key, /^mp_live_/, 'the new key is shown');
  await page.getByTestId('step-3-state').getByText('Done').waitFor();
  t.pass('the key step is done');

  t.equal(await page.getByLabel('From', { exact: true }).inputValue(), `hello@${domainName}`, 'the test message comes from the verified domain');
  t.equal(await page.getByLabel('To', { exact: true }).inputValue(), owner.email, 'and goes to the signed-in user');
  await page.getByRole('button', { name: 'Send test message' }).click();
  const sendId = (await page.getByTestId('sent-message-id').textContent())!;
  const caught = await sinkMessage((m) => m.subject === 'Hello from Mailpath' && String(m.rcpt_to).includes(owner.email));
  t.ok(caught, 'the test message reaches the dev sink');
  await page.getByTestId('send-status').getByText('delivered', { exact: true }).waitFor({ timeout: 30_000 });
  t.pass('the activity step follows the send to delivered');
  t.equal(await page.getByRole('link', { name: 'See the message in the activity feed' }).getAttribute('href'), `/app/activity/${sendId}`);
  await page.getByTestId('progress').getByText('5 of 5 steps done').waitFor({ timeout: 30_000 });
  t.pass('every step is done');
  t.same(await accessibilityViolations(page), [], 'onboarding, done: no serious or critical violation');
  await screenshot(page, 'onboarding');

  await page.reload();
  await page.getByTestId('progress').waitFor();
  t.equal(await page.getByTestId('progress').textContent(), '5 of 5 steps done', 'a returning user sees the progress from the API');
  t.equal(await page.getByTestId('secret').count(), 0, 'the key is not shown again');
  const prefix = (await page.getByTestId('key-prefix').textContent())!;
  t.ok(key.startsWith(prefix.replace(/…$/, '')), 'the keys list shows its prefix');
  t.notOk((await page.content()).includes(key), 'and nowhere the key itself');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Domains' }).click();
  await page.getByRole('link', { name: domainName }).click();
  await page.waitForURL(`${dev.origin}/app/domains/${domain.id}`);
  await page.getByRole('heading', { level: 1, name: domainName }).waitFor();
  t.ok(await page.getByText('rsa-sha256').isVisible(), 'the DKIM key is described');
  await page.getByRole('button', { name: 'Check DNS now' }).click();
  await page.getByText(`All sending records verified: ${domainName} can send.`).waitFor();
  t.same(await accessibilityViolations(page), [], 'domain page: no serious or critical violation');
  await screenshot(page, 'domain');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation on any page');

  t.test('rotating the DKIM key: confirmed, its record to publish, a stale page refused, a viewer without the button', async (t) => {
    const domainPage = `${dev.origin}/app/domains/${domain.id}`;
    // A second tab opened before the rotation: it still offers the button, and the API refuses its rotation (409).
    const stale = await context.newPage();
    t.teardown(() => stale.close());
    stale.on('console', (m) => m.type() === 'error' && problems.list.push(`console (second tab): ${m.text()}`));
    await stale.goto(domainPage);
    await stale.getByRole('button', { name: 'Rotate DKIM key' }).waitFor();

    const rotateButton = page.getByRole('button', { name: 'Rotate DKIM key' });
    await rotateButton.focus();
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: `Rotate the DKIM key of ${domainName}?` });
    await dialog.waitFor();
    t.ok(
      await dialog.getByRole('button', { name: 'Cancel' }).evaluate((b) => b === b.ownerDocument.activeElement),
      'the dialog opens with the safe choice focused',
    );
    t.same(await accessibilityViolations(page), [], 'the rotation dialog: no serious or critical violation');
    await screenshot(page, 'domain-rotate-confirm');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    t.ok(await rotateButton.evaluate((b) => b === b.ownerDocument.activeElement), 'Escape closes it, focus back on the button');
    t.equal(await page.getByTestId('rotation').count(), 0, 'cancelled: nothing rotated');

    await page.keyboard.press('Enter');
    await dialog.getByLabel('Reason (optional)').fill('Yearly rotation');
    await dialog.getByRole('button', { name: 'Rotate DKIM key' }).click();
    await page.getByTestId('rotation').waitFor({ timeout: 60_000 });
    const listed = await page.request.get(`${dev.origin}/api/v1/domains/${domain.id}/dkim/rotations`);
    const [rotation] = (
      (await listed.json()) as { data: { items: { state: string; new_selector: string; reason: string; dns_record: { host: string; value: string } }[] } }
    ).data.items;
    t.equal(rotation?.reason, 'Yearly rotation', 'the API started one rotation, with the reason given');
    t.equal(await page.getByTestId('rotation-state').textContent(), 'publishing', "the rotation's state, as the API answered it");
    t.equal(await page.getByTestId('publish-record-host').textContent(), `${rotation!.new_selector}._domainkey.${domainName}`, 'the new record: its host');
    t.equal(await page.getByTestId('publish-record-value').textContent(), rotation!.dns_record.value, 'and its value, to publish');
    t.ok(
      await page
        .getByTestId('rotation')
        .getByRole('heading')
        .evaluate((h) => h === h.ownerDocument.activeElement),
      'focus moves to the rotation',
    );
    t.equal(await rotateButton.count(), 0, 'one rotation at a time: no button while it is in flight');
    await page.getByRole('button', { name: 'Copy the new DKIM value' }).click();
    t.equal(await page.evaluate('navigator.clipboard.readText()'), rotation!.dns_record.value, 'the new value copies');
    t.same(await accessibilityViolations(page), [], 'a rotation in flight: no serious or critical violation');
    await screenshot(page, 'domain-rotation');

    await stale.getByRole('button', { name: 'Rotate DKIM key' }).click();
    await stale.getByRole('dialog').getByRole('button', { name: 'Rotate DKIM key' }).click();
    await stale.getByRole('alert').getByText('a DKIM rotation is already in flight for this domain; wait for it to finish or roll it back').waitFor();
    t.pass("the stale tab's rotation is refused, in the API's words");
    await stale.getByTestId('rotation').waitFor();
    t.equal(await stale.getByTestId('rotation-state').textContent(), 'publishing', 'and it now shows the rotation in flight');
    t.same(await accessibilityViolations(stale), [], 'the refusal: no serious or critical violation');
    await screenshot(stale, 'domain-rotation-refused');

    // A viewer of the workspace sees the rotation, not the button; another workspace's browser sees no domain at all.
    const session = (await (await page.request.get(`${dev.origin}/api/v1/auth/session`)).json()) as { data: { csrf_token: string } };
    const invite = await page.request.post(`${dev.origin}/api/v1/team/invites`, {
      headers: { 'x-csrf-token': session.data.csrf_token },
      data: { email: `viewer-${unique}@onboard.localhost`, role: 'viewer' },
    });
    const { token } = ((await invite.json()) as { data: { token: string } }).data;
    const viewer = await newUser(browser);
    t.teardown(() => viewer.context.close());
    const joined = await viewer.page.request.post(`${dev.origin}/api/v1/auth/session/accept-invite`, { data: { token, password: 'Viewer-horse-42' } });
    t.equal(joined.status(), 200, 'a viewer joins');
    await viewer.page.goto(domainPage);
    await viewer.page.getByTestId('rotation').waitFor();
    t.equal(await viewer.page.getByRole('button', { name: 'Rotate DKIM key' }).count(), 0, 'a viewer has no rotate button');
    t.equal(await viewer.page.getByTestId('publish-record-host').textContent(), `${rotation!.new_selector}._domainkey.${domainName}`, 'but sees the record');

    const stranger = await newUser(browser);
    t.teardown(() => stranger.context.close());
    const registered = await stranger.page.request.post(`${dev.origin}/api/v1/auth/session/register`, {
      data: { tenant_name: 'Stranger', tenant_slug: `stranger-${unique}`, email: `owner@stranger-${unique}.localhost`, password: owner.password },
    });
    t.equal(registered.status(), 201, 'another workspace');
    await stranger.page.goto(domainPage);
    await stranger.page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
    t.equal(await stranger.page.getByRole('button', { name: 'Rotate DKIM key' }).count(), 0, "another workspace's domain: not found, nothing to rotate");
    t.same(unexpected([...problems.list, ...viewer.problems.list, ...stranger.problems.list]), [], 'no console error or CSP violation');
  });

  t.test('the domain page at phone width and in the dark theme', async (t) => {
    const storage = await context.storageState();
    for (const options of [{ width: 390, height: 844 }, { colorScheme: 'dark' as const }]) {
      const other = await newUser(browser, options);
      t.teardown(() => other.context.close());
      await other.context.addCookies(storage.cookies);
      for (const [path, heading] of [
        [`/app/domains/${domain.id}`, domainName],
        ['/app/onboarding', 'Get started'],
      ] as const) {
        await other.page.goto(`${dev.origin}${path}`);
        await other.page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await other.page.getByTestId('record-dkim').waitFor();
        if (options.width) {
          t.ok(await other.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), `${path}: nothing wider than a phone`);
          await screenshot(other.page, path === '/app/onboarding' ? 'onboarding-phone' : 'domain-phone');
        }
        t.same(await accessibilityViolations(other.page), [], `${path}, ${options.width ? 'phone' : 'dark theme'}: no serious or critical violation`);
      }
      t.same(unexpected(other.problems.list), []);
    }
  });
});
