// The dashboard as served: / and /dashboard lead to /app/, every app path is the one page under a strict CSP with no
// inline script or style, assets are hashed, cached for good and precompressed, and the first page fits its budget.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { APP_CONTENT_SECURITY_POLICY, webBundleDir } from '../../../api/pages/web-app.js';
import { buildTestApp } from '../../helpers/app.js';

const { app } = await buildTestApp(t);
const dir = webBundleDir();
if (!dir) throw new Error('the dashboard is not built: test/run.mjs builds it into .build/web');
const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as {
  entry: string;
  css: string | null;
  preloads: string[];
  files: { name: string; bytes: number; gzip_bytes: number }[];
};

/** The budget for the first page: its JS and CSS, gzip. */
const FIRST_PAGE_BUDGET_BYTES = 150 * 1024;

t.test('/, /dashboard and /app lead to /app/', async (t) => {
  for (const url of ['/', '/dashboard', '/app']) {
    const res = await app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 302, url);
    t.equal(res.headers.location, '/app/', `${url} → /app/`);
  }
});

t.test('links of e-mails sent before the account pages moved lead to the app, token and all; POST is gone', async (t) => {
  for (const page of ['reset-password', 'accept-invite']) {
    const res = await app.inject({ method: 'GET', url: `/${page}?token=abc_DEF-123` });
    t.equal(res.statusCode, 302, page);
    t.equal(res.headers.location, `/app/${page}?token=abc_DEF-123`);
    t.equal(res.headers['referrer-policy'], 'no-referrer', 'the token never leaves in a Referer');
    t.equal((await app.inject({ method: 'GET', url: `/${page}` })).headers.location, `/app/${page}`, 'no query, none added');
    const posted = await app.inject({
      method: 'POST',
      url: `/${page}`,
      payload: 'token=abc',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.equal(posted.statusCode, 405, 'the old form posts are not served');
  }
});

t.test('every app path is the one page, under the strict policy', async (t) => {
  for (const url of ['/app/', '/app/sign-in', '/app/activity/msg_123?x=1']) {
    const res = await app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 200, url);
    t.match(res.headers['content-type'], /^text\/html/);
    t.equal(res.headers['content-security-policy'], APP_CONTENT_SECURITY_POLICY);
    t.equal(res.headers['x-frame-options'], 'DENY');
    t.equal(res.headers['cache-control'], 'no-cache', 'the page is revalidated, so a deploy reaches open tabs');
    const page = res.body;
    t.notOk(/<script(?![^>]*\bsrc=)[^>]*>/i.test(page), 'no inline script');
    t.notOk(/<style/i.test(page), 'no style element');
    t.notOk(/\sstyle=/i.test(page), 'no style attribute');
    t.notOk(/\son[a-z]+=/i.test(page), 'no inline event handler');
    t.notOk(/https?:\/\//i.test(page), 'nothing from another origin');
  }
  const policy = APP_CONTENT_SECURITY_POLICY;
  t.match(policy, /script-src 'self';/, 'scripts from this origin only');
  t.notOk(/unsafe-inline|unsafe-eval/.test(policy), 'no unsafe-inline or unsafe-eval');
  t.match(policy, /frame-ancestors 'none'/);
});

t.test('assets: hashed names, cached for good, precompressed, 404 when missing', async (t) => {
  const res = await app.inject({ method: 'GET', url: `/app/assets/${manifest.entry}`, headers: { 'accept-encoding': 'gzip' } });
  t.equal(res.statusCode, 200);
  t.match(res.headers['content-type'], /javascript/);
  t.match(res.headers['cache-control'], /immutable/);
  t.match(res.headers['cache-control'], /max-age=31536000/);
  t.equal(res.headers['content-encoding'], 'gzip', 'the precompressed copy');
  t.ok(gunzipSync(res.rawPayload).length > 0);
  t.match(manifest.entry, /^main-[A-Z0-9]{8}\.js$/, 'the entry name carries its hash');
  const brotli = await app.inject({ method: 'GET', url: `/app/assets/${manifest.entry}`, headers: { 'accept-encoding': 'br' } });
  t.equal(brotli.headers['content-encoding'], 'br');
  const missing = await app.inject({ method: 'GET', url: '/app/assets/old-chunk-AAAAAAAA.js' });
  t.equal(missing.statusCode, 404, 'a missing asset is a 404, never the page');
  t.notMatch(missing.headers['content-type'], /html/);
  const traversal = await app.inject({ method: 'GET', url: '/app/assets/..%2f..%2fpackage.json' });
  t.not(traversal.statusCode, 200, 'nothing outside the assets');
});

t.test('the first page (sign-in) fits in 150 KB of JS and CSS, gzip', async (t) => {
  const sizes = new Map(manifest.files.map((f) => [f.name, f.gzip_bytes]));
  const signIn = manifest.files.find((f) => /^sign-in-[A-Z0-9]+\.js$/.test(f.name));
  t.ok(signIn, 'the sign-in page is a chunk of its own');
  const first = [manifest.entry, ...(manifest.css ? [manifest.css] : []), ...manifest.preloads, signIn!.name];
  const total = first.reduce((sum, name) => sum + (sizes.get(name) ?? Number.NaN), 0);
  t.ok(Number.isFinite(total), 'every file of the first page is in the manifest');
  t.ok(total <= FIRST_PAGE_BUDGET_BYTES, `first page: ${(total / 1024).toFixed(1)} KB gzip of ${FIRST_PAGE_BUDGET_BYTES / 1024} KB`);
  const page = (await app.inject({ method: 'GET', url: '/app/sign-in' })).body;
  for (const name of [manifest.entry, ...manifest.preloads, ...(manifest.css ? [manifest.css] : [])])
    t.ok(page.includes(`/app/assets/${name}`), `the page names ${name}`);
});
