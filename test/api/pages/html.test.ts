// The account pages' HTML helpers: every interpolation escaped unless it is markup built by the same tag; the CSP allows exactly the page's style.
import { createHash } from 'node:crypto';
import t from 'tap';
import { CONTENT_SECURITY_POLICY, escapeHtml, html, renderPage, SafeHtml } from '../../../api/pages/html.js';

t.test('escapeHtml covers text and quoted attributes', async (t) => {
  t.equal(escapeHtml(`<a href="x" title='y'>&amp;</a>`), '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;amp;&lt;/a&gt;');
  t.equal(escapeHtml('plain text'), 'plain text');
});

t.test('html escapes values, keeps its own markup, joins arrays and drops empty values', async (t) => {
  const inner = html`<b>${'<i>'}</b>`;
  t.ok(inner instanceof SafeHtml);
  t.equal(inner.value, '<b>&lt;i&gt;</b>');
  t.equal(html`<p>${inner}</p>`.value, '<p><b>&lt;i&gt;</b></p>', 'nested markup is not escaped twice');
  t.equal(html`${['<', html`<br>`, 1]}`.value, '&lt;<br>1');
  t.equal(html`[${undefined}${null}${false}]`.value, '[]');
  t.equal(html`<input value="${'" onfocus="x'}">`.value, '<input value="&quot; onfocus=&quot;x">');
  t.equal(html`${{ toString: () => '<script>' }}`.value, '&lt;script&gt;', 'objects are escaped through their text');
});

t.test('a page: lang, title and heading escaped, the inline style allowed by its hash and nothing else', async (t) => {
  const page = renderPage('<Title>', html`<p>x</p>`);
  t.match(page, /^<!doctype html>\n<html lang="en">\n/);
  t.match(page, '<title>&lt;Title&gt; – Mailpath</title>');
  t.match(page, '<h1>&lt;Title&gt;</h1>');
  const styles = [...page.matchAll(/<style>([^<]*)<\/style>/g)].map((m) => m[1]!);
  t.equal(styles.length, 1);
  const hash = createHash('sha256').update(styles[0]!, 'utf8').digest('base64');
  t.equal(CONTENT_SECURITY_POLICY, `default-src 'none'; style-src 'sha256-${hash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`);
  t.notMatch(page, /style="/, 'no style attributes (the hash does not cover them)');
});
