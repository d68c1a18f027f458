// Compatibility with mailauth's DKIM signer: the internal shared/sending/dkim.ts still composes (dkimBody, a file under
// mailauth/lib that is not its public API), the header steps dkim-header.ts writes as mailauth's internals do, and the
// whole against mailauth's own dkimSign.
import { createHash, generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { dkimBody } from 'mailauth/lib/dkim/body/index.js';
import { generateCanonicalizedHeader } from 'mailauth/lib/dkim/header/index.js';
import { formatSignatureHeaderLine, getSigningHeaderLines, parseHeaders } from 'mailauth/lib/tools.js';
import { signMessage } from '../../../shared/sending/dkim.js';
import { headerSigning } from '../../../shared/sending/dkim-header.js';

/** Read when a check fails: what the upgrade must re-check. */
const WHERE =
  'see shared/sending/dkim.ts, shared/sending/mailauth-internals.d.ts and the section "Upgrading the libraries used below their API" of docs/architecture.md';

const HEAD =
  'From: Ann <ann@send.example>\r\nTo: bob@example.org\r\nSubject:  Hello   there \r\nDate: Sat, 21 Nov 2026 12:00:00 +0000\r\nMessage-ID: ' +
  '<m1@send.example>\r\nX-Other: not signed\r\n';
const BODY = 'Hi  there \t\r\nsecond line\r\n\r\n\r\n';
const MESSAGE = Buffer.from(`${HEAD}\r\n${BODY}`);
const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');

t.test('mailauth/lib/dkim/body/index.js dkimBody(canonicalization, hash, maxBodyLength): the relaxed body hash of RFC 6376 §3.4.4', async (t) => {
  const empty = dkimBody('relaxed', 'sha256', false);
  t.equal(empty.digest('base64'), sha256(''), `an empty body hashes as nothing: ${WHERE}`);
  const hasher = dkimBody('relaxed', 'sha256', false);
  // Fed in pieces, as a stream would: runs of white space become one space, trailing space and empty lines go.
  hasher.update(Buffer.from(BODY.slice(0, 7)));
  hasher.update(Buffer.from(BODY.slice(7)));
  t.equal(hasher.digest('base64'), sha256('Hi there\r\nsecond line\r\n'), WHERE);
});

/** A fixed sequence of pseudo-random numbers, so a failure can be run again as it was. */
function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

const SIGNED =
  'from:to:cc:reply-to:subject:date:message-id:mime-version:content-type:content-transfer-encoding:' +
  'list-unsubscribe:list-unsubscribe-post:feedback-id:in-reply-to:references';

t.test(
  "dkim-header.ts takes mailauth's header steps (parseHeaders, getSigningHeaderLines, relaxedHeaders, formatSignatureHeaderLine) on varied header blocks",
  async (t) => {
    const random = seeded(5);
    const pick = <T>(xs: T[]) => xs[Math.floor(random() * xs.length)]!;
    const names = [
      'From',
      'to',
      'SUBJECT',
      'Date',
      'Message-ID',
      'X-Other',
      'Reply-To',
      'Cc',
      'List-Unsubscribe',
      'Feedback-ID',
      'Content-Type',
      'MIME-Version',
      'Received',
    ];
    const values = [
      ' plain',
      '  two  spaces ',
      '\tTab\tvalue',
      ' folded\r\n continued',
      ' deep\r\n\t fold \r\n  again',
      ':colon',
      ' \xc3\xa9 raw',
      ' a\xa0nbsp',
      '',
      ' <https://x/u/abc>,\r\n <mailto:u@x>',
      ` ${'long '.repeat(30)}`,
    ];
    let differing = 0;
    for (let i = 0; i < 300; i++) {
      const head = `${Array.from({ length: 1 + Math.floor(random() * 12) }, () => `${pick(names)}${pick([':', ' :', ':'])}${pick(values)}`).join('\r\n')}\r\n`;
      const tags = {
        domain: pick(['send.example', 'mail.example.co.uk']),
        selector: pick(['mp20261121', 's1']),
        time: 1_790_000_000 + i,
        bodyHash: 'BH'.repeat(22),
      };
      const ours = headerSigning(head, new Set(SIGNED.split(':')), tags);
      const lines = getSigningHeaderLines(parseHeaders(Buffer.from(head, 'latin1')).parsed, SIGNED);
      const theirs = generateCanonicalizedHeader('DKIM', lines, {
        signingDomain: tags.domain,
        selector: tags.selector,
        algorithm: 'rsa-sha256',
        canonicalization: 'relaxed/relaxed',
        signTime: new Date(tags.time * 1000),
        bodyHash: tags.bodyHash,
      });
      const field = formatSignatureHeaderLine('DKIM', { ...theirs.dkimHeaderOpts, b: 'SIG'.repeat(115) }, true);
      if (!ours.canonical.equals(theirs.canonicalizedHeader) || ours.field('SIG'.repeat(115)) !== field) differing++;
    }
    t.equal(differing, 0, `no header block differs: ${WHERE}`);
  },
);

t.test("all of them together: signMessage writes the very signature mailauth's public dkimSign writes (RSA PKCS#1 v1.5 is deterministic)", async (t) => {
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const at = new Date('2026-11-21T12:00:00Z');
  const campaign =
    'List-Unsubscribe:\r\n <https://mp.example/u/abc.def>,\r\n <mailto:u-abc.def@mx.mp.example>\r\nList-Unsubscribe-Post: List-Unsubscribe=One-Click\r\n' +
    'Feedback-ID: c1:t1:campaign:mailpath\r\nFrom: Shop <news@send.example>\r\nTo: reader@example.org\r\nSubject: =?UTF-8?Q?Fr=C3=BChling?=\r\n' +
    'Message-ID: <s1@mx.mp.example>\r\nDate: Sat, 21 Nov 2026 12:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative;\r\n ' +
    'boundary="--_NmP-1-Part_1"\r\n';
  const messages = [MESSAGE, Buffer.from(`${campaign}\r\n----_NmP-1-Part_1\r\nContent-Type: text/plain\r\n\r\nHi  =\r\nthere\r\n----_NmP-1-Part_1--\r\n`)];
  const tag = (header: string, name: string) => new RegExp(`[; ]${name}=([^;]+)`).exec(header.replace(/\r\n\s+/g, ''))?.[1]?.trim();
  for (const message of messages) {
    const ours = await signMessage(message, { domain: 'send.example', selector: 'mp20261121', privateKey }, at);
    const ourHeader = ours.subarray(0, ours.length - message.length).toString();
    const theirs = await dkimSign(message, {
      // Its typings want these at the top level too; its code reads signatureData.
      signingDomain: 'send.example',
      selector: 'mp20261121',
      privateKey,
      canonicalization: 'relaxed/relaxed',
      algorithm: 'rsa-sha256',
      signTime: at,
      // Its typings say string[]; its code reads a colon-separated string (getSigningHeaderLines).
      headerList: SIGNED as unknown as string[],
      signatureData: [{ signingDomain: 'send.example', selector: 'mp20261121', privateKey }],
    });
    t.same(theirs.errors ?? [], [], 'mailauth signed without errors');
    t.equal(`${ourHeader}`, theirs.signatures, `the whole DKIM-Signature field is mailauth's, byte for byte: ${WHERE}`);
    for (const name of ['bh', 'h', 'b']) t.match(tag(ourHeader, name), /\S/, `ours has ${name}=`);
  }
});
