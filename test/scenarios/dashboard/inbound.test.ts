// The inbound message reader in a real Chromium against a real `mailpath dev`: mail handed to the MX as another server
// would (a multipart message with a text part, an HTML part written to track and run code, and a PDF attachment; an
// HTML-only newsletter) is opened from its mailbox with the keyboard and read: its addresses, its text as sent, its
// attachment's name and size, every header. The sender's HTML never becomes markup and fetches nothing. Another
// mailbox's or another workspace's message in the address reads as "Not found". Light, dark, phone width; no serious
// accessibility violation, console error or CSP violation.
import t from 'tap';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { createMailbox, mailToMx, seedTenant, signIn, waitForMessages } from '../../helpers/dashboard-seed.js';
import { startDevServer } from '../../helpers/dev-server.js';

const dev = await startDevServer(t, mailpathArgs('dev'));
const browser = await launchBrowser(t);
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));

const acme = await seedTenant(dev, 'inbound');
const other = await seedTenant(dev, 'elsewhere');
const support = await createMailbox(dev, acme, 'support');
const sales = await createMailbox(dev, acme, 'sales');
const theirs = await createMailbox(dev, other, 'help');

// 1,500 bytes of attachment: 1.5 KB as the page writes it. Base64 lines never start with a dot (no SMTP dot-stuffing).
const pdf = Buffer.alloc(1500, 'PDF-');
const TEXT = 'Hello,\r\nthe invoice is attached. <b>This stays text.</b>\r\nAnn';
const multipart = [
  'From: Ann Example <ann@sender.example>',
  `To: Support <support@${acme.domain}>`,
  'Cc: bob@sender.example',
  'Subject: Invoice 42 attached',
  'Date: Tue, 01 Dec 2026 10:00:00 +0000',
  'Message-ID: <inv42@sender.example>',
  'X-Ticket: 42',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary="mix"',
  '',
  '--mix',
  'Content-Type: multipart/alternative; boundary="alt"',
  '',
  '--alt',
  'Content-Type: text/plain; charset=utf-8',
  '',
  TEXT,
  '--alt',
  'Content-Type: text/html; charset=utf-8',
  '',
  '<p>Hello, <b id="sender-bold">the invoice</b></p><script>document.title = "owned"</script>' +
    '<img id="sender-pixel" src="https://tracker.example/p.gif" alt="">',
  '--alt--',
  '--mix',
  'Content-Type: application/pdf; name="invoice-42.pdf"',
  'Content-Disposition: attachment; filename="invoice-42.pdf"',
  'Content-Transfer-Encoding: base64',
  '',
  ...(pdf.toString('base64').match(/.{1,76}/g) ?? []),
  '--mix--',
].join('\r\n');
await mailToMx(dev, 'ann@sender.example', `support@${acme.domain}`, multipart);
await mailToMx(
  dev,
  'news@sender.example',
  `support@${acme.domain}`,
  'From: News <news@sender.example>\r\nSubject: Newsletter\r\nMIME-Version: 1.0\r\nContent-Type: text/html\r\n\r\n<h1 id="sender-heading">Big news</h1>',
);
await mailToMx(dev, 'zed@sender.example', `help@${other.domain}`, 'From: zed@sender.example\r\nSubject: Not yours\r\n\r\nSecret.');
const [newsletterId, invoiceId] = await waitForMessages(dev, acme, support, 2);
const [foreignId] = await waitForMessages(dev, other, theirs, 1);

t.test('a message opened from its mailbox: addresses, text, attachment, headers; its HTML stays text', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  const fetched: string[] = [];
  page.on('request', (r) => fetched.push(r.url()));
  await signIn(page, dev, acme);
  await page.goto(`${dev.origin}/app/inbound?mailbox=${support}`);
  const link = page.getByRole('link', { name: 'Invoice 42 attached', exact: true });
  await link.focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(`${dev.origin}/app/inbound/${support}/${invoiceId}`);
  await page.getByRole('heading', { level: 1, name: 'Invoice 42 attached' }).waitFor();

  const facts = (await page.getByTestId('message-facts').textContent())!;
  t.match(facts, 'FromAnn Example <ann@sender.example>', 'From, parsed');
  t.match(facts, `ToSupport <support@${acme.domain}>`);
  t.match(facts, 'Ccbob@sender.example');
  t.match(facts, `Envelopefrom ann@sender.example to support@${acme.domain}`);
  t.match(facts, /Mailpath's check.*spf=/, "Mailpath's own Authentication-Results");
  t.equal(await page.getByTestId('message-text').textContent(), TEXT.replaceAll('\r\n', '\n'), 'the text part, as sent');
  t.equal(await page.locator('main b').count(), 0, 'angle brackets in the text are text');

  const attachment = (await page.getByTestId('attachments').locator('tbody tr').allTextContents()).map((r) => r.trim());
  t.same(attachment, ['invoice-42.pdfapplication/pdf1.5 KB'], "the attachment's name, type and size");

  await page.getByText('Show all', { exact: false }).click();
  const headers = page.getByTestId('headers');
  t.match(await headers.getByRole('row', { name: /^X-Ticket/ }).textContent(), /^X-Ticket\s*42$/, 'every header, the custom ones too');
  t.match(await headers.getByRole('row', { name: /^Message-ID/ }).textContent(), '<inv42@sender.example>');

  await page.getByText('Show the HTML part as source text').click();
  t.match(await page.getByTestId('message-html').textContent(), '<script>document.title = "owned"</script>', 'the HTML shows as its source');
  t.equal(await page.locator('#sender-bold, #sender-pixel, main script').count(), 0, 'none of it became markup');
  t.notOk(
    fetched.some((u) => u.includes('tracker.example')),
    'the tracking pixel was never fetched',
  );
  t.not(await page.title(), 'owned', 'the script never ran');
  t.same(await accessibilityViolations(page), [], 'the reader: no serious or critical violation');
  await screenshot(page, 'inbound-message');

  await page
    .getByRole('navigation', { name: 'Breadcrumb' })
    .getByRole('link', { name: `support@${acme.domain}` })
    .click();
  await page.waitForURL(`${dev.origin}/app/inbound?mailbox=${support}`);
  await page.getByRole('link', { name: 'Newsletter', exact: true }).click();
  await page.waitForURL(`${dev.origin}/app/inbound/${support}/${newsletterId}`);
  await page.getByRole('heading', { level: 1, name: 'Newsletter' }).waitFor();
  await page.getByText('This message has no plain-text part.').waitFor();
  t.equal(await page.locator('#sender-heading').count(), 0, 'an HTML-only message: its heading is not the page’s');
  t.equal(await page.getByRole('heading', { level: 1 }).count(), 1);
  t.match(await page.getByTestId('attachments-none').textContent(), 'None', 'no attachments');
  t.same(unexpected(problems.list), [], 'no console error or CSP violation');
});

t.test('another mailbox’s or workspace’s message in the address: not found', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await signIn(page, dev, acme);
  for (const [path, what] of [
    [`/app/inbound/${support}/${foreignId}`, "another workspace's message under this workspace's mailbox"],
    [`/app/inbound/${theirs}/${foreignId}`, "another workspace's mailbox and message"],
    [`/app/inbound/${sales}/${invoiceId}`, "a message of this workspace's other mailbox"],
  ] as const) {
    await page.goto(`${dev.origin}${path}`);
    await page.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
    t.notOk(await page.getByText(/Not yours|Invoice 42/).isVisible(), `${what}: not found, nothing of it shown`);
  }
  t.ok(await page.getByRole('navigation', { name: 'Main' }).isVisible(), 'inside the shell');
  t.same(await accessibilityViolations(page), [], 'not found: no serious or critical violation');
  t.same(unexpected(problems.list), []);
});

t.test('dark theme and phone width', async (t) => {
  for (const [options, name] of [
    [{ colorScheme: 'dark' as const }, 'inbound-message-dark'],
    [{ width: 390, height: 844 }, 'inbound-message-phone'],
  ] as const) {
    const user = await newUser(browser, options);
    t.teardown(() => user.context.close());
    await signIn(user.page, dev, acme);
    await user.page.goto(`${dev.origin}/app/inbound/${support}/${invoiceId}`);
    await user.page.getByTestId('message-text').waitFor();
    if ('width' in options) t.ok(await user.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'nothing wider than a phone');
    t.same(await accessibilityViolations(user.page), [], `${name}: no serious or critical violation`);
    await screenshot(user.page, name);
    t.same(unexpected(user.problems.list), []);
  }
});
