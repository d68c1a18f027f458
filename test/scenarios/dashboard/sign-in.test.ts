// The dashboard's front door in a real Chromium against a real `mailpath dev`: register, turn two-factor sign-in on
// with the QR page's key, sign in with a TOTP code and with a recovery code (once), keyboard-only, phone width and
// the dark theme; forgot and reset a password from the mailed link (the old link shape too); no page has a serious
// accessibility violation, a console error or a CSP violation.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { generate } from 'otplib';
import t from 'tap';
import { accessibilityViolations, launchBrowser, newUser, screenshot } from '../../helpers/browser.js';
import { mailpathArgs } from '../../helpers/cli.js';
import { startDevServer } from '../../helpers/dev-server.js';

const dev = await startDevServer(t, mailpathArgs('dev'));
const browser = await launchBrowser(t);
const unique = Math.random().toString(36).slice(2, 8);
const owner = { name: 'Acme Dashboard', email: `owner-${unique}@acme.localhost`, password: 'Correct-horse-42' };

/** API refusals the page shows the user (a 401 from GET /auth/session when signed out) log a console line too. */
const unexpected = (list: string[]) => list.filter((line) => !/Failed to load resource: the server responded with a status of 4\d\d/.test(line));

t.test('register, turn 2FA on, sign in with a code and with a recovery code', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/`);
  await page.waitForURL(/\/app\/sign-in\?next=/);
  t.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Sign in', 'a signed-out visit lands on sign-in');
  t.same(await accessibilityViolations(page), [], 'sign-in: no serious or critical accessibility violation');
  await screenshot(page, 'sign-in');

  await page.getByRole('link', { name: 'Create an account' }).click();
  await page.getByLabel('Company or workspace name').fill(owner.name);
  t.equal(await page.getByLabel('Workspace address').inputValue(), 'acme-dashboard', 'the slug is suggested from the name');
  await page.getByLabel('Workspace address').fill(`acme-${unique}`);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  t.match(await page.getByRole('alert').textContent(), /password/i, "a weak password is refused with the API's message");
  t.same(await accessibilityViolations(page), [], 'register with an error: no serious or critical violation');
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.waitForURL(`${dev.origin}/app/onboarding`);
  t.match(await page.getByTestId('tenant-name').textContent(), owner.name, 'signed in to the new workspace');
  t.equal(await page.evaluate('document.cookie'), '', 'no page script can read the session cookie');

  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
  const secret = (await page.getByTestId('totp-secret').textContent())!;
  t.match(secret, /^[A-Z2-7]{32}$/, 'the key is shown beside the QR code');
  t.ok(await page.getByRole('img', { name: 'QR code of the authenticator key' }).isVisible(), 'the QR code shows (a data: image the CSP allows)');
  t.same(await accessibilityViolations(page), [], 'account, enrolling: no serious or critical violation');
  await screenshot(page, 'account-two-factor');
  await page.getByLabel('Code from the app').fill(await generate({ secret }));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByTestId('recovery-codes').waitFor();
  const codes = (await page.getByTestId('recovery-codes').locator('li').allTextContents()).map((c) => c.trim());
  t.equal(codes.length, 8, 'eight recovery codes are shown once');
  t.ok(await page.getByText('Save your recovery codes now').isVisible());

  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/app\/sign-in/);
  await page.goto(`${dev.origin}/app/account`);
  await page.waitForURL(/\/app\/sign-in\?next=%2Fapp%2Faccount/);
  await page.getByLabel('Email').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // The enrolment spent the current step's code: the next step's (accepted one step either side) signs in.
  await page.getByLabel('Authenticator code').fill(await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 }));
  t.same(await accessibilityViolations(page), [], 'two-factor step: no serious or critical violation');
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.waitForURL(`${dev.origin}/app/account`);
  t.pass('a TOTP code signs in and returns to the page asked for');

  await page.getByRole('button', { name: 'Sign out' }).click();
  for (const attempt of ['first', 'second']) {
    await page.goto(`${dev.origin}/app/sign-in`);
    await page.getByLabel('Email').fill(owner.email);
    await page.getByLabel('Password').fill(owner.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await page.getByLabel('Recovery code').fill(codes[0]!);
    await page.getByRole('button', { name: 'Verify' }).click();
    if (attempt === 'first') {
      await page.waitForURL(`${dev.origin}/app/`);
      t.pass('a recovery code signs in');
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/app\/sign-in/);
    } else {
      t.match(await page.getByRole('alert').textContent(), /code/i, 'a used recovery code is refused, in the API’s words');
      t.match(page.url(), /\/app\/sign-in/, 'and signs nobody in');
    }
  }
  t.same(unexpected(problems.list), [], 'no console error or CSP violation on any page');
});

t.test('keyboard only: the sign-in form in order, submitted with Enter', async (t) => {
  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/sign-in`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  const order: string[] = [];
  for (let i = 0; i < 4; i++) {
    await page.keyboard.press('Tab');
    order.push(await page.evaluate<string>("document.activeElement?.name || document.activeElement?.textContent || ''"));
  }
  t.same(order.slice(0, 3), ['email', 'password', 'Sign in'], 'email, password, then the button');
  await page.getByLabel('Email').focus();
  await page.keyboard.type(owner.email);
  await page.keyboard.press('Tab');
  await page.keyboard.type('Wrong-password-99');
  await page.keyboard.press('Enter');
  t.match(await page.getByRole('alert').textContent(), /email or password|invalid/i, 'Enter submits; a wrong password is refused');
  t.same(unexpected(problems.list), []);
});

/** The reset link of the newest platform e-mail to `email` in the dev data dir's outbox (no system sender in dev). */
async function mailedResetToken(email: string): Promise<string> {
  const dir = join(dev.dataDir, 'outbox');
  for (let attempt = 0; attempt < 100; attempt++) {
    const files = (() => {
      try {
        return readdirSync(dir).sort().reverse();
      } catch {
        return [];
      }
    })();
    for (const file of files) {
      const text = readFileSync(join(dir, file), 'utf8');
      const token = /\/app\/reset-password\?token=([A-Za-z0-9_-]{43})/.exec(text)?.[1];
      if (text.includes(`To: ${email}`) && token) return token;
    }
    await sleep(100);
  }
  throw new Error(`no reset e-mail to ${email} in ${dir} after 10 s`);
}

t.test('forgot password: the mailed link (old shape too) sets a new one, ends other sessions, works once', async (t) => {
  const user = { email: `forgot-${unique}@acme.localhost`, password: 'Correct-horse-42', next: 'Battery-staple-77' };
  const before = await newUser(browser);
  t.teardown(() => before.context.close());
  await before.page.goto(`${dev.origin}/app/register`);
  await before.page.getByLabel('Company or workspace name').fill(`Forgetful ${unique}`);
  await before.page.getByLabel('Email').fill(user.email);
  await before.page.getByLabel('Password').fill(user.password);
  await before.page.getByRole('button', { name: 'Create account' }).click();
  await before.page.waitForURL(`${dev.origin}/app/onboarding`);

  const { page, problems, context } = await newUser(browser);
  t.teardown(() => context.close());
  await page.goto(`${dev.origin}/app/sign-in`);
  await page.getByRole('link', { name: /forgot/i }).click();
  await page.getByLabel('Email').fill(user.email);
  t.same(await accessibilityViolations(page), [], 'forgot password: no serious or critical violation');
  await screenshot(page, 'forgot-password');
  await page.getByRole('button', { name: 'Send reset link' }).click();
  await page.getByText('Check your inbox').waitFor();
  const token = await mailedResetToken(user.email);

  await page.goto(`${dev.origin}/reset-password?token=${token}`);
  await page.waitForURL(`${dev.origin}/app/reset-password?token=${token}`);
  t.pass('a link of the old shape opens the dashboard page, token and all');
  await page.getByRole('textbox', { name: 'New password' }).fill('short');
  await page.getByRole('button', { name: 'Set password' }).click();
  t.match(await page.getByRole('alert').textContent(), /password/i, "a weak password is refused in the API's words");
  t.same(await accessibilityViolations(page), [], 'reset with an error: no serious or critical violation');
  await page.getByRole('textbox', { name: 'New password' }).fill(user.next);
  await page.getByRole('button', { name: 'Set password' }).click();
  await page.getByText('Password changed').waitFor();
  t.pass('the weak try left the link usable; the strong password is set');
  await screenshot(page, 'reset-password');

  await page.goto(`${dev.origin}/app/reset-password?token=${token}`);
  await page.getByRole('textbox', { name: 'New password' }).fill('Another-staple-88');
  await page.getByRole('button', { name: 'Set password' }).click();
  t.match(await page.getByRole('alert').textContent(), /token|link|expired|used/i, 'the link works once');

  await before.page.goto(`${dev.origin}/app/`);
  await before.page.waitForURL(/\/app\/sign-in/);
  t.pass('the session signed in before the reset has ended');
  await page.goto(`${dev.origin}/app/sign-in`);
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password').fill(user.next);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${dev.origin}/app/`);
  t.pass('the new password signs in');
  t.same(unexpected(problems.list), []);
});

t.test('phone width and the dark theme', async (t) => {
  const phone = await newUser(browser, { width: 390, height: 844 });
  t.teardown(() => phone.context.close());
  await phone.page.goto(`${dev.origin}/app/register`);
  await phone.page.getByRole('heading', { name: 'Create your account' }).waitFor();
  t.ok(await phone.page.evaluate('document.documentElement.scrollWidth <= window.innerWidth'), 'nothing wider than a phone screen');
  await screenshot(phone.page, 'register-phone');

  const dark = await newUser(browser, { colorScheme: 'dark' });
  t.teardown(() => dark.context.close());
  await dark.page.goto(`${dev.origin}/app/sign-in`);
  await dark.page.getByRole('heading', { name: 'Sign in' }).waitFor();
  const background = await dark.page.evaluate('getComputedStyle(document.body).backgroundColor');
  t.equal(background, 'rgb(17, 17, 19)', 'the system dark preference gives the dark theme');
  t.same(await accessibilityViolations(dark.page), [], 'dark theme: no contrast or other serious violation');
  await screenshot(dark.page, 'sign-in-dark');
  await dark.page.getByLabel('Theme').selectOption('light');
  t.equal(await dark.page.evaluate('getComputedStyle(document.body).backgroundColor'), 'rgb(247, 247, 248)', 'the picker overrides it');
  await dark.page.reload();
  await dark.page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.equal(await dark.page.evaluate('document.documentElement.dataset.theme'), 'light', 'and is remembered');
  t.same(unexpected([...phone.problems.list, ...dark.problems.list]), []);
});
