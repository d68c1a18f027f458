// The send path's fast paths give exactly what the libraries they stand in for give: the in-memory composition of
// messages nodemailer builds (its streaming build; the simple shape has its own test, test/shared/sending/simple-message.test.ts) and the
// whole-body relaxed DKIM body hash (mailauth's byte-by-byte one).
import t from 'tap';
import { dkimBody } from 'mailauth/lib/dkim/body/index.js';
import { mimeTree, nodemailerBuild, streamedBuild, type OutboundContent } from '../../../shared/sending/compose.js';
import { relaxedBodyHash } from '../../../shared/sending/dkim.js';

/** A fixed sequence of pseudo-random numbers, so a failure can be run again as it was. */
function seeded(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

// The multipart boundaries are random per message; everything else must match byte for byte.
const withoutBoundaries = (b: Buffer) => b.toString('latin1').replace(/_NmP-[0-9a-f]+-Part_/g, 'BOUNDARY-');

t.test("composition in memory gives the bytes of nodemailer's streaming build", async (t) => {
  const random = seeded(42);
  const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
  const pieces = ['a', 'b c', ' ', '\t', '\n', '\r\n', '\r', 'é', '😀', '=', '.', '\n.', 'x'.repeat(90), '<a href="https://x/y?z=1">', '   \n', '\u00a0', '\0'];
  const text = (n: number) => Array.from({ length: Math.floor(random() * n) }, () => pick(pieces)).join('');
  let differing = 0;
  for (let i = 0; i < 400; i++) {
    const c: OutboundContent = {
      from: { address: 'news@example.test', ...(i % 2 ? { name: 'Shöp "News"' } : {}) },
      to: 'reader@example.net',
      subject: text(20),
      messageId: `m${i}@mx.example.test`,
      date: new Date(1.7e12 + i * 1000),
    };
    if (i % 4 !== 0) c.text = text(200);
    if (i % 3 !== 0) c.html = text(300);
    if (i % 5 === 0) c.replyTo = 'reply@example.test';
    if (i % 7 === 0) c.headers = { 'List-Unsubscribe': '<https://example.test/u/abc>', 'Feedback-ID': text(5).replace(/[\r\n]/g, '') };
    if (i % 11 === 0)
      c.attachments = [
        { filename: 'a.bin', content: Buffer.from(text(500)) },
        { filename: 'b.txt', content: Buffer.from(text(50)), contentType: 'text/plain' },
      ];
    if (i % 17 === 0) c.text = 'x'.repeat(70_000) + text(30);
    if (withoutBoundaries(await nodemailerBuild(c)) !== withoutBoundaries(await streamedBuild(mimeTree(c)))) differing++;
  }
  t.equal(differing, 0, 'no message differs');
});

t.test("the whole-body relaxed body hash equals mailauth's, and leaves bodies it cannot take to mailauth", async (t) => {
  const mailauth = (b: Buffer) => {
    const h = dkimBody('relaxed', 'sha256', false);
    h.update(b);
    return h.digest('base64');
  };
  const known: [string, string][] = [
    ['', ''],
    ['\r\n\r\n', ''],
    ['a  b \t\r\n \r\n\r\n', 'a b\r\n'],
    [' \tlead\r\n', ' lead\r\n'],
  ];
  for (const [body, canonical] of known) {
    t.equal(relaxedBodyHash(Buffer.from(body, 'latin1')), mailauth(Buffer.from(canonical, 'latin1')), JSON.stringify(body));
  }
  t.equal(relaxedBodyHash(Buffer.from('no final line break')), undefined);
  t.equal(relaxedBodyHash(Buffer.from('a lone\rCR\r\n')), undefined);
  const random = seeded(7);
  const pieces = ['a', 'bc', ' ', '  ', '\t', '\r\n', '\r\n\r\n', '\xe9', '=', '.', ' \t ', 'x'.repeat(80), '\r\n ', '\t\r\n'];
  let taken = 0;
  let differing = 0;
  for (let i = 0; i < 5000; i++) {
    const body = Buffer.from(`${Array.from({ length: Math.floor(random() * 30) }, () => pieces[Math.floor(random() * pieces.length)]).join('')}\r\n`, 'latin1');
    const fast = relaxedBodyHash(body);
    if (fast === undefined) continue;
    taken++;
    if (fast !== mailauth(body)) differing++;
  }
  t.ok(taken > 4000, `the fast path took ${taken} of 5000 bodies`);
  t.equal(differing, 0, 'no hash differs');
});
