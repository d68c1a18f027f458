// The one-pass builder of the simple message shape says what nodemailer's composer says: the same header section byte
// for byte, the same parts, and bodies that decode to the same text; its quoted-printable is valid and round-trips.
import t from 'tap';
import { simpleParser } from 'mailparser';
import { mimeTree, streamedBuild, type OutboundContent } from '../../../shared/sending/compose.js';
import { quotedPrintable } from '../../../shared/sending/quoted-printable.js';
import { simpleMessage } from '../../../shared/sending/simple-message.js';

/** A fixed sequence of pseudo-random numbers, so a failure can be run again as it was. */
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

/** What the DKIM signer makes of nodemailer's output: bare LFs as CRLF (signMessage does it before hashing). */
const crlf = (b: Buffer) => b.toString('latin1').replace(/(?<!\r)\n/g, '\r\n');

/** Decodes quoted-printable (RFC 2045), strictly: only what the encoder may write. */
function decodeQp(qp: string): Buffer {
  const bytes: number[] = [];
  const text = qp.replace(/=\r\n/g, '');
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '=') {
      bytes.push(parseInt(text.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(text.charCodeAt(i));
  }
  return Buffer.from(bytes);
}

t.test('quoted-printable: escapes, line-end whitespace, 76-character lines, never splitting an escape or a character', async (t) => {
  t.equal(quotedPrintable('a=b'), 'a=3Db');
  t.equal(quotedPrintable('end \nnext\t\r\nlast '), 'end=20\r\nnext=09\r\nlast=20');
  t.equal(quotedPrintable('é€😀'), '=C3=A9=E2=82=AC=F0=9F=98=80');
  t.equal(quotedPrintable('lone\rCR'), 'lone=0DCR');
  t.equal(quotedPrintable(''), '');
  const long = quotedPrintable('x'.repeat(200));
  t.same(
    long.split('\r\n').map((l) => l.length),
    [76, 76, 50],
  );
  t.ok(
    long
      .split('\r\n')
      .slice(0, -1)
      .every((l) => l.endsWith('=')),
    'soft breaks',
  );
  const random = seeded(11);
  const pieces = ['a', 'bc', ' ', '\t', '=', '\n', '\r\n', '\r', 'é', '€', '😀', '.', 'x'.repeat(80), '<a href="https://x/?a=1&b=2">', '   '];
  let bad = 0;
  for (let i = 0; i < 3000; i++) {
    const text = Array.from({ length: Math.floor(random() * 60) }, () => pieces[Math.floor(random() * pieces.length)]).join('');
    const qp = quotedPrintable(text);
    const lines = qp.split('\r\n');
    const valid = lines.every((l) => l.length <= 76 && !/[^\t\x20-\x7e]/.test(l) && !/[ \t]$/.test(l) && !/=(?![0-9A-F]{2}|$)/.test(l));
    const splitChar = lines.some((l, n) => l.endsWith('=') && /^=[89AB]/.test(lines[n + 1] ?? ''));
    const expected = Buffer.from(
      text
        .replace(/\r(?!\n)/g, '\u0000CR')
        .replace(/\r?\n/g, '\r\n')
        .replace(/\u0000CR/g, '\r'),
    );
    if (!valid || splitChar || !decodeQp(qp).equals(expected)) bad++;
  }
  t.equal(bad, 0, 'every encoding is valid, keeps characters whole and decodes to the text (line breaks as CRLF)');
});

t.test("the simple message has nodemailer's header section and parts, and the same content", async (t) => {
  const random = seeded(42);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  const pieces = ['a', 'b c', ' ', '\t', '\n', '\r\n', 'é', '😀', '=', '.', '\n.', 'x'.repeat(90), '<a href="https://x/y?z=1">', '   \n', '\u00a0'];
  const text = (n: number) => Array.from({ length: Math.floor(random() * n) }, () => pick(pieces)).join('');
  const names = ['Shöp "News"', 'Plain Name', 'A, B', 'Ünïcödé Größe', 'x'.repeat(80)];
  const subjects = () =>
    pick([
      'Hello',
      'Spring is here, Réader',
      `${'long subject '.repeat(8)}end`,
      text(20).replace(/[\r\n]/g, ' '),
      'Ünïcödé Größe Überschrift mit sehr viel Text der gefaltet werden muss',
    ]);
  let taken = 0;
  const differing: string[] = [];
  for (let i = 0; i < 300; i++) {
    const c: OutboundContent = {
      from: { address: 'news@example.test', ...(i % 2 ? { name: pick(names) } : {}) },
      to: 'reader@example.net',
      subject: subjects(),
      messageId: `m${i}@mx.example.test`,
      date: new Date(1.7e12 + i * 1000),
    };
    if (i % 4 !== 0) c.text = text(200);
    if (i % 3 !== 0) c.html = text(300);
    if (i % 5 === 0) c.replyTo = 'reply@example.test';
    if (i % 7 === 0)
      c.headers = {
        'List-Unsubscribe': '<https://example.test/u/abc>, <mailto:u-abc@mx.example.test>',
        'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
        'Feedback-ID': 'c:t:campaign:mailpath',
        'X-Note': pick(['plain', 'Grüße', '']),
      };
    const theirs = crlf(await streamedBuild(mimeTree(c)));
    const boundary = /boundary="([^"]+)"/.exec(theirs)?.[1];
    const mine = simpleMessage(c, boundary);
    if (!mine) continue;
    taken++;
    const ours = mine.toString('latin1');
    const head = (m: string) => m.slice(0, m.indexOf('\r\n\r\n'));
    if (head(ours) !== head(theirs)) differing.push(`${i}: header section`);
    if (/(?<!\r)\n/.test(ours)) differing.push(`${i}: a bare LF`);
    const [a, b] = await Promise.all([simpleParser(mine), simpleParser(Buffer.from(theirs, 'latin1'))]);
    if (a.subject !== b.subject || a.text !== b.text || a.html !== b.html || a.from?.text !== b.from?.text || a.messageId !== b.messageId)
      differing.push(`${i}: content`);
    // Part headers (type, charset, transfer encoding) are nodemailer's too.
    const partHeads = (m: string) => [...m.matchAll(/\r\n--[^\r\n]+\r\n((?:[^\r\n]+\r\n)+)\r\n/g)].map((x) => x[1]);
    if (JSON.stringify(partHeads(ours)) !== JSON.stringify(partHeads(theirs))) differing.push(`${i}: part headers`);
  }
  t.ok(taken > 200, `the one-pass builder took ${taken} of 300 messages`);
  t.same(differing, [], 'no message differs');
});

t.test('what the simple builder leaves to nodemailer', async (t) => {
  const base = { from: { address: 'a@example.test' }, to: 'b@example.net', subject: 's', messageId: 'm@x', date: new Date(0) };
  t.equal(simpleMessage({ ...base }), undefined, 'no body');
  t.equal(simpleMessage({ ...base, text: '' }), undefined, 'an empty body is no body');
  t.equal(simpleMessage({ ...base, text: 'Привет, мир! Как дела? Всё хорошо.' }), undefined, 'mostly non-Latin text: nodemailer writes base64');
  t.ok(simpleMessage({ ...base, text: 'hello' }));
});
