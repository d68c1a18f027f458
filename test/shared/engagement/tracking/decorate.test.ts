// decorateHtml: UTM tagging (query, fragment, existing utm_, mailto, unsubscribe and relative links), click links whose tokens sign send and destination,
// the open pixel, and the rest of the document byte for byte.
import { randomBytes, randomUUID } from 'node:crypto';
import t from 'tap';
import { decorateHtml, type DecorateInput } from '../../../../shared/engagement/tracking/decorate.js';
import { readClickToken, readOpenToken, unsubscribeUrl } from '../../../../shared/engagement/tracking/link-tokens.js';
import { withUtm } from '../../../../shared/engagement/tracking/utm.js';

const key = randomBytes(32);
const publicUrl = new URL('https://mail.example.net');
const UTM = { source: 'newsletter', medium: 'email', campaign: 'spring sale' };

const decorate = (html: string, over: Partial<DecorateInput> = {}) =>
  decorateHtml({
    html,
    sendId: randomUUID(),
    linkKey: key,
    owner: { tenantId: randomUUID(), interstitial: false },
    publicUrl,
    trackOpens: false,
    trackClicks: false,
    ...over,
  });

/** The href values of the decorated document, entities decoded. */
const hrefs = (html: string) => [...html.matchAll(/href=(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi)].map((m) => (m[1] ?? m[2] ?? m[3]!).replace(/&amp;/g, '&'));

t.test('UTM: appended to http(s) links, query strings and fragments kept, an existing utm_ parameter not duplicated', async (t) => {
  const html = [
    '<a href="https://shop.example/sale">a</a>',
    '<a href="https://shop.example/sale?id=7&amp;ref=x">b</a>',
    '<a href="https://shop.example/sale#details">c</a>',
    '<a href="https://shop.example/sale?id=7#details">d</a>',
    '<a href="https://shop.example/?utm_source=partner&amp;x=1">e</a>',
    '<a href="http://shop.example">f</a>',
    '<a href="https://shop.example/?">g</a>',
  ].join('\n');
  t.same(hrefs(decorate(html, { utm: UTM })), [
    'https://shop.example/sale?utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale',
    'https://shop.example/sale?id=7&ref=x&utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale',
    'https://shop.example/sale?utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale#details',
    'https://shop.example/sale?id=7&utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale#details',
    'https://shop.example/?utm_source=partner&x=1&utm_medium=email&utm_campaign=spring%20sale',
    'http://shop.example?utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale',
    'https://shop.example/?utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale',
  ]);
  t.equal(withUtm('https://a.example/?UTM_Medium=x', [['utm_medium', 'email']]), 'https://a.example/?UTM_Medium=x', 'names compared without case');
  t.equal(withUtm('https://a.example/x', [['utm_source', 'a&b=c']]), 'https://a.example/x?utm_source=a%26b%3Dc', 'values encoded');
  t.equal(withUtm('https://a.example/x', []), 'https://a.example/x');
  t.same(hrefs(decorate('<a href="https://a.example/">x</a>', { utm: { source: 'only' } })), ['https://a.example/?utm_source=only'], 'empty values left out');
});

t.test('mailto:, tel:, relative and anchor links, the unsubscribe link and our own links are left exactly as written', async (t) => {
  const sendId = randomUUID();
  const unsubscribe = unsubscribeUrl('https://mail.example.net', key, sendId);
  const html = [
    `<a href='mailto:help@shop.example?subject=Hi'>m</a>`,
    '<a href="tel:+15550100">t</a>',
    '<a href="/account">r</a>',
    '<a href="../up?x=1">u</a>',
    '<a href="#top">h</a>',
    `<a href="${unsubscribe}">unsubscribe</a>`,
    '<a href="https://mail.example.net/c/abc.def">ours</a>',
    '<a name="anchor">no href</a>',
    '<link href="https://cdn.example/style.css" rel="stylesheet">',
    '<img src="https://cdn.example/logo.png">',
  ].join('\n');
  t.equal(decorate(html, { sendId, utm: UTM, trackClicks: true }), html, 'nothing changed');
});

t.test('click tracking: each http(s) link through a signed redirect naming the send and the tagged destination', async (t) => {
  const sendId = randomUUID();
  const html =
    '<p>Hi</p><a href="https://shop.example/sale?id=1">Sale</a> <A HREF=https://blog.example/post>Post</A> <a href="https://shop.example/sale?id=1">again</a>';
  const owner = { tenantId: randomUUID(), interstitial: false };
  const out = decorate(html, { sendId, owner, trackClicks: true, utm: UTM });
  const links = hrefs(out);
  t.equal(links.length, 3);
  const targets = links.map((href) => {
    t.match(href, /^https:\/\/mail\.example\.net\/c\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    return readClickToken(key, href.slice('https://mail.example.net/c/'.length));
  });
  t.same(targets[0], {
    sendId,
    url: 'https://shop.example/sale?id=1&utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale',
    links: 2,
    tenantId: owner.tenantId,
    interstitial: false,
  });
  t.same(
    targets[1],
    {
      sendId,
      url: 'https://blog.example/post?utm_source=newsletter&utm_medium=email&utm_campaign=spring%20sale',
      links: 2,
      tenantId: owner.tenantId,
      interstitial: false,
    },
    'unquoted value',
  );
  t.same(targets[2], targets[0], 'a repeated link is one destination (the count is of distinct links)');
  t.equal(out.replace(/href="[^"]*"|HREF="[^"]*"/g, 'HREF'), '<p>Hi</p><a HREF>Sale</a> <A HREF>Post</A> <a HREF>again</a>', 'only the href values changed');
});

t.test('entities in href are decoded for the destination and re-escaped in the attribute', async (t) => {
  const out = decorate('<a href="https://a.example/?q=&quot;x&quot;&amp;y=1">x</a>', { utm: { source: 's' } });
  t.equal(out, '<a href="https://a.example/?q=&quot;x&quot;&amp;y=1&amp;utm_source=s">x</a>');
});

t.test("Outlook's conditional comments: VML button links are tagged and tracked too; a comment's text is not", async (t) => {
  const html = '<!--[if mso]><v:roundrect href="https://shop.example/btn" style="x"></v:roundrect><![endif]--><!-- <a href="https://hidden.example/"> -->';
  const out = decorate(html, { utm: { source: 's' } });
  t.equal(
    out,
    '<!--[if mso]><v:roundrect href="https://shop.example/btn?utm_source=s" style="x"></v:roundrect><![endif]--><!-- <a href="https://hidden.example/"> -->',
  );
});

t.test('links inside <script>, <style> and attribute text are not links', async (t) => {
  const html =
    '<style>a[href="https://x.example/"]{}</style><script>var a = \'<a href="https://x.example/">\';</script><p title="<a href=https://x.example/>">t</p>';
  t.equal(decorate(html, { utm: UTM, trackClicks: true }), html);
});

t.test('open pixel: before the last </body> (any case), or at the end without one', async (t) => {
  const sendId = randomUUID();
  const out = decorate('<html><body><p>x</p>\n</BODY>\n</html>', { sendId, trackOpens: true });
  const match = /<img src="https:\/\/mail\.example\.net\/o\/([^"]+)" width="1" height="1" alt=""><\/BODY>\n<\/html>$/.exec(out);
  t.ok(match, out);
  t.equal(readOpenToken(key, match![1]!), sendId, 'the pixel names the send');
  t.match(
    decorate('<p>fragment</p>', { sendId, trackOpens: true }),
    /^<p>fragment<\/p><img src="https:\/\/mail\.example\.net\/o\/[^"]+" width="1" height="1" alt="">$/,
  );
  t.equal(
    decorate('<!-- </body> --><p>x</p>', { trackOpens: true }).indexOf('<img'),
    '<!-- </body> --><p>x</p>'.length,
    'a </body> in a comment is not the end of the body',
  );
});

t.test('nothing asked, nothing changed; a public URL with a path keeps it', async (t) => {
  const html = '<a href="https://a.example/">x</a></body>';
  t.equal(decorate(html), html);
  const out = decorate(html, { trackOpens: true, trackClicks: true, publicUrl: new URL('https://proxy.example/mailpath/') });
  t.match(out, /href="https:\/\/proxy\.example\/mailpath\/c\//);
  t.match(out, /src="https:\/\/proxy\.example\/mailpath\/o\//);
});

t.test('two recipients of one body get their own tokens (the parse is shared, the tokens are not)', async (t) => {
  const html = '<a href="https://a.example/">x</a></body>';
  const [a, b] = [randomUUID(), randomUUID()];
  const outA = decorate(html, { sendId: a, trackClicks: true, trackOpens: true });
  const outB = decorate(html, { sendId: b, trackClicks: true, trackOpens: true });
  t.equal(readClickToken(key, hrefs(outA)[0]!.split('/c/')[1]!)!.sendId, a);
  t.equal(readClickToken(key, hrefs(outB)[0]!.split('/c/')[1]!)!.sendId, b);
});
