// Compatibility of the mailauth internals shared/sending/dkim.ts composes (files under mailauth/lib that are not its public API): one test per internal, and the whole against mailauth's own dkimSign.
import { createHash, generateKeyPairSync } from 'node:crypto';
import t from 'tap';
import { dkimSign } from 'mailauth/lib/dkim/sign.js';
import { dkimBody } from 'mailauth/lib/dkim/body/index.js';
import { generateCanonicalizedHeader } from 'mailauth/lib/dkim/header/index.js';
import { formatSignatureHeaderLine, getSigningHeaderLines, parseHeaders } from 'mailauth/lib/tools.js';
import { signMessage } from '../../../shared/sending/dkim.js';

/** Read when a check fails: what the upgrade must re-check. */
const WHERE = 'see shared/sending/dkim.ts, shared/sending/mailauth-internals.d.ts and the README section "Upgrading smtp-server and mailauth"';

const HEAD = 'From: Ann <ann@send.example>\r\nTo: bob@example.org\r\nSubject:  Hello   there \r\nDate: Sat, 21 Nov 2026 12:00:00 +0000\r\nMessage-ID: <m1@send.example>\r\nX-Other: not signed\r\n';
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

t.test('mailauth/lib/tools.js parseHeaders(buffer): one entry per field, lower-case key, the raw line', async (t) => {
  const { parsed } = parseHeaders(Buffer.from(HEAD));
  t.same(parsed.map((h) => h.key), ['from', 'to', 'subject', 'date', 'message-id', 'x-other'], WHERE);
  t.equal(parsed[2]!.casedKey, 'Subject', WHERE);
  t.equal(parsed[2]!.line.toString(), 'Subject:  Hello   there ', `the line without its line ending: ${WHERE}`);
});

t.test('mailauth/lib/tools.js getSigningHeaderLines(parsed, fieldNames): the listed fields present, bottom-up, and h= naming them', async (t) => {
  const { parsed } = parseHeaders(Buffer.from(HEAD));
  const lines = getSigningHeaderLines(parsed, 'from:to:cc:subject:date:message-id');
  t.same(lines.headers.map((h) => h.key), ['message-id', 'date', 'subject', 'to', 'from'], `absent (cc) and unlisted (x-other) fields left out: ${WHERE}`);
  t.equal(lines.keys, 'Message-ID: Date: Subject: To: From', `h= as mailauth writes it: ${WHERE}`);
});

t.test('mailauth/lib/dkim/header/index.js generateCanonicalizedHeader(type, lines, options): relaxed header block ending in the unsigned DKIM-Signature', async (t) => {
  const { parsed } = parseHeaders(Buffer.from(HEAD));
  const at = new Date('2026-11-21T12:00:00Z');
  const { canonicalizedHeader, dkimHeaderOpts } = generateCanonicalizedHeader('DKIM', getSigningHeaderLines(parsed, 'from:subject'), {
    signingDomain: 'send.example',
    selector: 'mp20261121',
    algorithm: 'rsa-sha256',
    canonicalization: 'relaxed/relaxed',
    signTime: at,
    bodyHash: 'BH',
  });
  const text = canonicalizedHeader.toString();
  t.ok(text.startsWith('subject:Hello there\r\nfrom:Ann <ann@send.example>\r\ndkim-signature:v=1; a=rsa-sha256; c=relaxed/relaxed; d=send.example; h=Subject: From;'), `relaxed canonical form: ${WHERE}`);
  t.match(text, /; s=mp20261121; t=\d+; bh=BH; b=$/, `ends with an empty b= and no line ending: ${WHERE}`);
  t.match(dkimHeaderOpts, { d: 'send.example', s: 'mp20261121', bh: 'BH', t: Math.floor(at.getTime() / 1000) }, WHERE);
});

t.test('mailauth/lib/tools.js formatSignatureHeaderLine(type, values, folded): the DKIM-Signature field with b= set', async (t) => {
  const line = formatSignatureHeaderLine('DKIM', { a: 'rsa-sha256', c: 'relaxed/relaxed', d: 'send.example', s: 'sel', t: 1, bh: 'BH', h: 'From', b: 'SIG' }, true);
  t.match(line, /^DKIM-Signature: /, WHERE);
  t.equal(line.replace(/\r\n /g, ' '), 'DKIM-Signature: v=1; a=rsa-sha256; c=relaxed/relaxed; d=send.example; h=From; q=dns/txt; s=sel; t=1; bh=BH; b=SIG', `tags in mailauth's order: ${WHERE}`);
  t.ok(line.split('\r\n').every((l, i) => i === 0 || l.startsWith(' ')), `folded with a leading space: ${WHERE}`);
  t.notOk(line.endsWith('\r\n'), `the caller adds the line ending: ${WHERE}`);
});

t.test('all of them together: signMessage writes the very signature mailauth\'s public dkimSign writes (RSA PKCS#1 v1.5 is deterministic)', async (t) => {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const at = new Date('2026-11-21T12:00:00Z');
  const ours = await signMessage(MESSAGE, { domain: 'send.example', selector: 'mp20261121', privateKey }, at);
  const ourHeader = ours.subarray(0, ours.length - MESSAGE.length).toString();
  const theirs = await dkimSign(MESSAGE, {
    // Its typings want these at the top level too; its code reads signatureData.
    signingDomain: 'send.example',
    selector: 'mp20261121',
    privateKey,
    canonicalization: 'relaxed/relaxed',
    algorithm: 'rsa-sha256',
    signTime: at,
    // Its typings say string[]; its code reads a colon-separated string (getSigningHeaderLines), as ours passes.
    headerList: 'from:to:cc:reply-to:subject:date:message-id:mime-version:content-type:content-transfer-encoding:list-unsubscribe:list-unsubscribe-post:in-reply-to:references' as unknown as string[],
    signatureData: [{ signingDomain: 'send.example', selector: 'mp20261121', privateKey }],
  });
  t.same(theirs.errors ?? [], [], 'mailauth signed without errors');
  const tag = (header: string, name: string) => new RegExp(`[; ]${name}=([^;]+)`).exec(header.replace(/\r\n\s+/g, ''))?.[1]?.trim();
  for (const name of ['bh', 'h', 'b']) {
    t.match(tag(ourHeader, name), /\S/, `ours has ${name}=`);
    t.equal(tag(ourHeader, name), tag(theirs.signatures, name), `${name}= matches mailauth's own signer: ${WHERE}`);
  }
});
