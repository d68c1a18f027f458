// Drives Debian's Chromium (playwright-core, executablePath /usr/bin/chromium) against a dashboard on loopback: one
// browser per test file, a fresh context (cookies, storage) per user, accessibility checked with axe-core, every
// page's screenshot kept, and any console error or CSP violation counted against the page.
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { projectRoot } from '../../shared/kernel/paths.js';
import type { TestLike } from './app.js';

export const CHROMIUM = '/usr/bin/chromium';

// Without the background-networking flags Chromium keeps trying Google's hosts, which this machine's closed network
// refuses, many at a time. Playwright's launch() gives each browser a fresh, temporary profile.
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where the run's screenshots go (the README's come from here): .build/screenshots, beside the compiled tree. */
export const SCREENSHOTS = join(projectRoot(), '.build', 'screenshots');

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function launchBrowser(t: TestLike): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS, timeout: 60_000 });
  t.teardown(() => browser.close());
  return browser;
}

export interface Problems {
  /** Console errors and CSP violations seen on the pages of a context. */
  list: string[];
}

/** A new user's browser: its own cookies and storage; the dev server's self-signed certificate accepted. */
export async function newUser(browser: Browser, options: { width?: number; height?: number; colorScheme?: 'light' | 'dark'; storageState?: SignedIn } = {}) {
  const context: BrowserContext = await browser.newContext({
    // A session signed in once (signedIn below) and reused: sign-in attempts are throttled, as for anyone.
    ...(options.storageState ? { storageState: options.storageState } : {}),
    ignoreHTTPSErrors: true,
    viewport: { width: options.width ?? 1280, height: options.height ?? 860 },
    colorScheme: options.colorScheme ?? 'light',
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  context.setDefaultTimeout(15_000);
  const problems: Problems = { list: [] };
  const page = await context.newPage();
  page.on('console', (message) => {
    if (message.type() === 'error') problems.list.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (err) => problems.list.push(`page error: ${err.message}`));
  return { context, page, problems };
}

/** A browser's cookies and storage after it signed in, for other contexts to start from. */
export type SignedIn = Awaited<ReturnType<BrowserContext['storageState']>>;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * The page's serious and critical accessibility violations (axe-core, WCAG 2 A and AA rules). axe is evaluated
 * through the DevTools protocol, which the page's CSP does not govern: nothing is added to the page's own scripts.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  // Expressions as strings: they run in the page, whose DOM types the Node.js tree does not have.
  const violations = (await page.evaluate(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } }).then((r) => r.violations)",
  )) as AxeViolation[];
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

/** A full-page screenshot under .build/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}
