// The template pages in a real Chromium against a real `mailpath dev`: a template written in the editor whose Liquid
// error the page shows at the line and column the API names (and puts the caret there), then saved, listed, and
// previewed for a contact of the workspace, equal to the API's own render for that contact (its custom field
// included) in the subject, the text and the HTML frame. No serious accessibility violation, console error or CSP
// violation on any page.
import t from 'tap';
import { Agent, request } from 'undici';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { callDev, type SeededTenant, seedTenant, signIn } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

const dev = await startDevServer(t, mailpathArgs('dev'));
const browser = await launchBrowser(t);
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

async function api(tenant: SeededTenant, method: 'GET' | 'POST', path: string, body?: unknown) {
  const answer = await callDev(dev, method, path, tenant.key, body);
  return answer as { status: number; body: { data: any; message?: string } };
}

const acme = await seedTenant(dev, 'templates');
await api(acme, 'POST', '/contact-custom-fields', { key: 'plan', label: 'Plan', type: 'text' });
const ann = await api(acme, 'POST', '/contacts', { email: 'ann@example.com', first_name: 'Ann', custom_fields: { plan: 'Gold' } });
if (ann.status !== 201) throw new Error(`contact: ${JSON.stringify(ann.body)}`);

const SUBJECT = 'Hi {{ contact.first_name | default: "there" }}';
const BROKEN = '<p>Welcome aboard.</p>\n  {% if custom_fields.plan %}<p>Your plan: {{ custom_fields.plan }}</p>\n<p>See you soon.</p>';
const FIXED = '<p>Welcome aboard.</p>\n  {% if custom_fields.plan %}<p>Your plan: {{ custom_fields.plan }}</p>{% endif %}\n<p>See you soon.</p>';
const TEXT = 'Welcome, {{ contact.first_name }}. Plan: {{ custom_fields.plan | default: "none" }}';

t.test('a Liquid error at its line and column, then saved, listed and previewed for a contact as the API renders it', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  // What the API says of the broken body, for the page to show as it is.
  const refused = await api(acme, 'POST', '/templates', { name: 'probe', subject: SUBJECT, body_html: BROKEN });
  t.equal(refused.status, 422, 'the API refuses the unclosed if');
  const [, line, column, reason] = /^body_html: Liquid syntax error at line (\d+), column (\d+): (.*)$/s.exec(refused.body.message!)!;
  t.equal(line, '2', 'on line 2');

  await signIn(page, dev, acme);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Templates' }).click();
  await page.getByRole('link', { name: 'New template' }).click();
  await page.getByLabel('Name').fill('Welcome');
  await page.getByLabel('Subject').fill(SUBJECT);
  await page.getByLabel('HTML body').fill(BROKEN);
  await page.getByLabel('Text body').fill(TEXT);
  await page.getByRole('button', { name: 'Create template' }).click();
  const error = page.getByTestId('body_html-error');
  await error.waitFor();
  t.match(await error.textContent(), `Line ${line}, column ${column}: ${reason}`, "the API's line, column and reason, at the HTML body");
  t.equal(await page.getByLabel('HTML body').getAttribute('aria-invalid'), 'true', 'the field is marked invalid');
  t.same(await accessibilityViolations(page), [], 'the editor with an error: no serious or critical violation');
  await screenshot(page, 'template-error');
  await error.getByRole('button', { name: `Go to line ${line}` }).click();
  const caret = await page
    .getByLabel('HTML body')
    .evaluate((el: { selectionStart: number; ownerDocument: { activeElement: unknown } }) => [el.ownerDocument.activeElement === el, el.selectionStart]);
  const offset = BROKEN.split('\n')[0]!.length + 1 + Number(column) - 1;
  t.same(caret, [true, offset], 'the caret is at the line and column');

  await page.getByLabel('HTML body').fill(FIXED);
  await page.getByRole('button', { name: 'Create template' }).click();
  await page.waitForURL(/\/app\/templates\/[0-9a-f-]{36}$/);
  const id = page.url().split('/').pop()!;
  await page.getByRole('heading', { name: 'Welcome', level: 1 }).waitFor();
  const stored = (await api(acme, 'GET', `/templates/${id}`)).body.data;
  t.same([stored.subject, stored.body_html, stored.body_text], [SUBJECT, FIXED, TEXT], 'the API stored what was typed');

  await page.getByLabel("Contact's address").fill('ann@example.com');
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByTestId('preview').waitFor();
  const contact = { email: 'ann@example.com', first_name: 'Ann', last_name: null, custom_fields: { plan: 'Gold' } };
  const rendered = (await api(acme, 'POST', `/templates/${id}/render`, { contact })).body.data;
  t.equal(rendered.subject, 'Hi Ann', 'the API renders the subject for Ann');
  t.equal(await page.getByTestId('preview-subject').textContent(), rendered.subject, 'the preview subject is the API render');
  t.equal(await page.getByTestId('preview-text').textContent(), rendered.text, 'the text too');
  t.match(rendered.text, /Plan: Gold/, 'with her custom field');
  t.equal(await page.getByTestId('preview-html').textContent(), rendered.html, 'the HTML source too');
  const framed = await page.frameLocator('iframe.preview-frame').locator('body').textContent();
  t.match(framed, /Your plan: Gold/, 'the HTML is drawn in the sandboxed frame');
  t.same(await accessibilityViolations(page), [], 'the editor with a preview: no serious or critical violation');
  await screenshot(page, 'template-preview');

  await page.getByRole('link', { name: 'All templates' }).click();
  const row = page.getByTestId('template-row').filter({ hasText: 'Welcome' });
  await row.waitFor();
  t.match(await row.textContent(), /HTML, text/, 'listed with both bodies');
  t.same(await accessibilityViolations(page), [], 'templates: no serious or critical violation');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');

  const other = await seedTenant(dev, 'other-templates');
  const res = await request(`${dev.origin}/api/v1/templates/${id}`, { dispatcher: insecure, headers: { authorization: `Bearer ${other.key}` } });
  t.equal(res.statusCode, 404, "another workspace's key gets 404 for it");
  await res.body.dump();
});
