// Compatibility of the nodemailer internals Mailpath deep-imports (files under nodemailer/lib that are not its public
// API): one test per internal, the behaviour relied on checked against the pinned library, and a fingerprint of each
// function used, so an upgrade that changes one fails here by name.
import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import t from 'tap';
import MailComposer from 'nodemailer/lib/mail-composer';
import MimeNode from 'nodemailer/lib/mime-node';
import { buildHeaderValue, foldLines, hasLongerLines } from 'nodemailer/lib/mime-funcs';
import { Encoder as Base64Encoder } from 'nodemailer/lib/base64';
import { Encoder as QpEncoder } from 'nodemailer/lib/qp';
import SMTPPool from 'nodemailer/lib/smtp-pool';
import { Transports } from '../../../mta/outbound/deliver/transports.js';
import { composeTestMessage } from '../../../jobs/inbound-webhooks/test-send.js';
import { loadConfig } from '../../../shared/config/index.js';
import { mimeTree, nodemailerBuild, streamedBuild, type OutboundContent } from '../../../shared/sending/compose.js';
import { startSmtpSink } from '../../helpers/smtp-sink.js';

/** Read when a check fails: what the upgrade must re-check. */
const where = (files: string) => `see ${files} and the section "Upgrading the libraries used below their API" of docs/architecture.md`;
const FUNCS = where('shared/sending/simple-message.ts and shared/sending/dkim-header.ts');
const NODE = where('shared/sending/simple-message.ts and shared/sending/compose.ts (writeNode, NodeInternals)');
const ENCODERS = where('shared/sending/compose.ts (encodeWhole, writeNode)');
const COMPOSER = where('shared/sending/compose.ts (mimeTree) and jobs/inbound-webhooks/test-send.ts');
const POOL = where('mta/outbound/deliver/transports.ts (poolFor, sendRaw, outcomeOfError)');

/**
 * A function's source text in the installed module's file (not fn.toString(): the whole-suite run bundles nodemailer,
 * which reprints it), without white space, hashed: an exported function runs to the next line `}`, a class method
 * (four spaces in) to the next `    }`. `file` names another file of the module's directory.
 */
function fingerprint(module: string, name: string, file?: string): string {
  const main = fileURLToPath(import.meta.resolve(module));
  const lines = readFileSync(file ? join(dirname(main), file) : main, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.startsWith(`export function ${name}(`) || l.startsWith(`    ${name}(`));
  if (start < 0) return `${name} is gone`;
  const closer = lines[start]!.startsWith('export') ? '}' : '    }';
  const end = lines.findIndex((l, i) => i > start && l === closer);
  return createHash('sha256')
    .update(
      lines
        .slice(start, end + 1)
        .join('\n')
        .replace(/\s+/g, ''),
    )
    .digest('hex')
    .slice(0, 16);
}

/** Checks the fingerprints of a module's functions: a change means re-reading that function against the tests of its module. */
function fingerprints(
  t: { equal(found: unknown, wanted: unknown, message: string): unknown },
  module: string,
  expected: Record<string, string>,
  why: string,
  file?: string,
): void {
  for (const [name, hash] of Object.entries(expected)) {
    t.equal(fingerprint(module, name, file), hash, `${module}${file ? `/${file}` : ''} ${name} changed: ${why}`);
  }
}

t.test('nodemailer/lib/mime-funcs foldLines(str, lineLength): folds a header field at white space before 76 characters, 76 by default', async (t) => {
  const subject = 'Subject: Your weekly digest of everything that happened in the workspace this week, with links';
  const folded = 'Subject: Your weekly digest of everything that happened in the workspace\r\n this week, with links';
  t.equal(foldLines(subject, 76), folded, FUNCS);
  // dkim-header.ts folds the DKIM-Signature field without giving the width.
  t.equal(foldLines(subject), folded, `the default width is 76: ${FUNCS}`);
  t.equal(foldLines('Short: value', 76), 'Short: value', FUNCS);
  fingerprints(t, 'nodemailer/lib/mime-funcs', { foldLines: '8c879850508e21e5' }, FUNCS);
});

t.test('nodemailer/lib/mime-funcs buildHeaderValue({value, params}): the multipart Content-Type with its boundary quoted', async (t) => {
  t.equal(
    buildHeaderValue({ value: 'multipart/alternative', params: { boundary: '--_NmP-0123456789abcdef-Part_1' } }),
    'multipart/alternative; boundary="--_NmP-0123456789abcdef-Part_1"',
    FUNCS,
  );
  fingerprints(t, 'nodemailer/lib/mime-funcs', { buildHeaderValue: '153c6712a3d00afc' }, FUNCS);
});

t.test('nodemailer/lib/mime-funcs hasLongerLines(str, lineLength) and isPlainText: a body is 7bit up to 76 characters a line', async (t) => {
  t.equal(hasLongerLines('a'.repeat(76), 76), false, FUNCS);
  t.equal(hasLongerLines(`short\n${'a'.repeat(77)}\nshort`, 76), true, FUNCS);
  // simple-message.ts's NON_LATIN is isPlainText's character class: a change there changes which bodies are 7bit.
  fingerprints(t, 'nodemailer/lib/mime-funcs', { hasLongerLines: '6520b0fa03352f1a', isPlainText: 'ddafeae2f9a92a1e' }, FUNCS);
});

t.test(
  'nodemailer/lib/mime-node MimeNode#encodeHeaderValue, #_normalizeHeaderKey, #_getTextEncoding: the header encoders simple-message.ts uses',
  async (t) => {
    const node = new MimeNode('text/plain') as unknown as {
      encodeHeaderValue(key: string, value: unknown): string;
      _normalizeHeaderKey(key: string): string;
      _getTextEncoding(value: string): string;
    };
    t.equal(node.encodeHeaderValue('From', { name: 'Änne Müller', address: 'ann@send.example' }), '=?UTF-8?Q?=C3=84nne_M=C3=BCller?= <ann@send.example>', NODE);
    t.equal(node.encodeHeaderValue('Subject', 'Frühling im Garten'), '=?UTF-8?Q?Fr=C3=BChling_im_Garten?=', NODE);
    t.equal(node.encodeHeaderValue('Subject', 'plain text'), 'plain text', `plain text is left as it is (simple-message.ts's PLAIN_TEXT shortcut): ${NODE}`);
    t.equal(node.encodeHeaderValue('Date', new Date('2026-11-21T12:00:00Z')), 'Sat, 21 Nov 2026 12:00:00 +0000', NODE);
    t.equal(node.encodeHeaderValue('Message-ID', '<m1@send.example>'), '<m1@send.example>', NODE);
    t.same(
      ['message-id', 'x-mp-tenant', 'MIME-VERSION', 'content-type', 'list-unsubscribe-post'].map((k) => node._normalizeHeaderKey(k)),
      ['Message-ID', 'X-Mp-Tenant', 'MIME-Version', 'Content-Type', 'List-Unsubscribe-Post'],
      NODE,
    );
    // simple-message.ts's transferEncoding counts as _getTextEncoding does: more Latin letters than 8-bit is Q, else B.
    t.same([node._getTextEncoding('Grüße aus München'), node._getTextEncoding('日本語のテキストです a')], ['Q', 'B'], NODE);
    fingerprints(
      t,
      'nodemailer/lib/mime-node',
      { encodeHeaderValue: '872c0d30de79474c', _normalizeHeaderKey: 'df7ddc15f42520c3', _getTextEncoding: '68ae92a6f59bd908' },
      NODE,
    );
  },
);

/** The boundaries of a message, numbered in order of appearance (each build draws new random ones). */
const sameBoundaries = (message: Buffer) => {
  const seen = new Map<string, string>();
  return message.toString().replace(/--_NmP-[0-9a-f-]+-Part_\d+/g, (b) => {
    if (!seen.has(b)) seen.set(b, `BOUNDARY${seen.size}`);
    return seen.get(b)!;
  });
};

const CONTENT: OutboundContent = {
  from: { name: 'Shop', address: 'news@send.example' },
  to: 'reader@example.org',
  replyTo: 'help@send.example',
  subject: 'Frühling: unsere Auswahl',
  text: `Grüße aus München! ${'Eine lange Zeile ohne Umbruch. '.repeat(5)}\nZweite Zeile`,
  html: '<p>Grüße aus <b>München</b></p>',
  headers: { 'X-MP-Tenant': 't1', 'List-Unsubscribe': '<https://mp.example/u/abc>' },
  attachments: [
    { filename: 'data.bin', content: Buffer.from(Array.from({ length: 300 }, (_, i) => i % 256)), contentType: 'application/octet-stream' },
    { filename: 'notes.txt', content: Buffer.from('a\rb\nc'), contentType: 'text/plain' },
  ],
  messageId: 'm1@mx.mp.example',
  date: new Date('2026-11-21T12:00:00Z'),
};

t.test(
  "nodemailer/lib/mime-node MimeNode#buildHeaders, #getHeader, #stream and the fields compose.ts's in-memory build reads: it writes what the streaming " +
    'build writes',
  async (t) => {
    const root = mimeTree(CONTENT);
    const tree = root as unknown as Record<string, unknown> & { childNodes: Record<string, unknown>[] };
    for (const field of ['_transforms', '_processFuncs', 'childNodes']) t.ok(Array.isArray(tree[field]), `MimeNode#${field} is an array: ${NODE}`);
    // multipart and boundary are set once the headers are built, as writeNode reads them.
    t.match(root.buildHeaders(), /^Content-Type: multipart\/mixed;/m, NODE);
    t.equal(tree['multipart'], 'mixed', NODE);
    t.match(tree['boundary'], /^--_NmP-[0-9a-f-]+-Part_\d+$/, NODE);
    t.equal(tree['keepBcc'], false, `compose.ts sets keepBcc: ${NODE}`);
    t.ok(
      tree.childNodes.some((c) => Buffer.isBuffer(c['content'])),
      `a Buffer attachment stays the node's content: ${NODE}`,
    );
    const streamed = await streamedBuild(mimeTree(CONTENT));
    const inMemory = await nodemailerBuild(CONTENT);
    t.equal(sameBoundaries(inMemory), sameBoundaries(streamed), `the in-memory build is the streaming build byte for byte: ${NODE}`);
    t.match(streamed.toString(), /Content-Transfer-Encoding: base64\r\n/, NODE);
    t.match(streamed.toString(), /Content-Transfer-Encoding: quoted-printable\r\n/, NODE);
    fingerprints(
      t,
      'nodemailer/lib/mime-node',
      { getTransferEncoding: '7e494dfe99e3ee41', buildHeaders: 'b2dcf7cf1aba0d8d', stream: 'b09064ec324b8296', build: '760b8a7fcb080f6b' },
      `compose.ts's writeNode copies stream(): compare them, ${NODE}`,
    );
  },
);

/** Runs an encoder over a whole body as compose.ts's encodeWhole does: _transform once, then _flush, collecting push. */
function encodeWhole(encoder: QpEncoder | Base64Encoder, body: Buffer): string {
  const out: Buffer[] = [];
  encoder.push = (chunk: unknown, encoding?: BufferEncoding) => {
    if (chunk !== null) out.push(typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : (chunk as Buffer));
    return true;
  };
  const fail = (err?: Error | null) => {
    if (err) throw err;
  };
  encoder._transform(body, 'buffer' as BufferEncoding, fail);
  encoder._flush(fail);
  return Buffer.concat(out).toString();
}

/** The encoder used as a stream, written in small chunks. */
function encodeStreamed(encoder: QpEncoder | Base64Encoder, body: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    encoder.pipe(new Writable({ write: (c: Buffer, _e, done) => (out.push(c), done()) }).on('finish', () => resolve(Buffer.concat(out).toString())));
    encoder.on('error', reject);
    for (let i = 0; i < body.length; i += 7) encoder.write(body.subarray(i, i + 7));
    encoder.end();
  });
}

t.test('nodemailer/lib/base64 Encoder (#_transform, #_flush): base64 in lines of 76 with CRLF, called whole as a stream would be', async (t) => {
  const body = Buffer.from(Array.from({ length: 100 }, (_, i) => i));
  const expected =
    'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8gISIjJCUmJygpKissLS4vMDEyMzQ1Njc4\r\nOTo7PD0+P0BBQkNERUZHSElKS0xNTk9QUVJTVFVWV1hZWltcXV5fYGFiYw==';
  t.equal(encodeWhole(new Base64Encoder(), body), expected, ENCODERS);
  t.equal(await encodeStreamed(new Base64Encoder(), body), expected, `the stream writes the same: ${ENCODERS}`);
  fingerprints(t, 'nodemailer/lib/base64', { _emit: 'b07587769502d3e3', _transform: '80fb3d512d3da97c', _flush: '1b6b877a1ce14621' }, ENCODERS);
});

t.test('nodemailer/lib/qp Encoder({binary}) (#_transform, #_flush): soft breaks at 76, trailing space encoded, lone CR/LF kept or encoded', async (t) => {
  const text = Buffer.from(`${'Grüße aus München! '.repeat(5)}\r\nzweite Zeile  \r\n`);
  const expected =
    'Gr=C3=BC=C3=9Fe aus M=C3=BCnchen! Gr=C3=BC=C3=9Fe aus M=C3=BCnchen! =\r\nGr=C3=BC=C3=9Fe aus M=C3=BCnchen! Gr=C3=BC=C3=9Fe aus M=C3=BCnchen! ' +
    '=\r\nGr=C3=BC=C3=9Fe aus M=C3=BCnchen!=20\r\nzweite Zeile =20\r\n';
  t.equal(encodeWhole(new QpEncoder({ binary: false }), text), expected, ENCODERS);
  t.equal(await encodeStreamed(new QpEncoder({ binary: false }), text), expected, `the stream writes the same: ${ENCODERS}`);
  const data = Buffer.from('a\rb\nc\r\nd');
  t.equal(encodeWhole(new QpEncoder({ binary: true }), data), 'a=0Db=0Ac\r\nd', `binary: a lone CR or LF is data: ${ENCODERS}`);
  t.equal(encodeWhole(new QpEncoder({ binary: false }), data), 'a\rb\nc\r\nd', ENCODERS);
  fingerprints(
    t,
    'nodemailer/lib/qp',
    { _transform: '1e336f49b6043080', _flush: '0e6b4a166937d6b2', _encodeSlices: '787aac9b6b5d4160', _encodeSlice: '672d4570e41e0ee6' },
    ENCODERS,
  );
});

t.test('nodemailer/lib/mail-composer MailComposer(mail).compile().build(cb): the message test-send.ts and compose.ts build', async (t) => {
  const at = new Date('2026-11-21T12:00:00Z');
  const message = (await composeTestMessage('mp.example', 't1', at)).toString();
  const [head, body] = message.split('\r\n\r\n');
  t.match(
    head,
    /^X-Mp-Tenant: t1\r\nFrom: Mailpath <no-reply@mp\.example>\r\nTo: webhook-test@mp\.example\r\nSubject: Mailpath inbound webhook test\r\n/,
    COMPOSER,
  );
  t.match(
    head,
    new RegExp(
      /\r\nMessage-ID: <webhook-test-[0-9a-f-]+@mp\.example>\r\nDate: Sat, 21 Nov 2026 12:00:00 \+0000\r\n/.source +
        /Content-Transfer-Encoding: quoted-printable\r\nMIME-Version: 1\.0\r\n/.source,
    ),
    COMPOSER,
  );
  t.match(body, /^This is a test message from Mailpath/, COMPOSER);
  t.notMatch(message, /(?<!\r)\n/, `CRLF line ends only: ${COMPOSER}`);
  const node = new MailComposer({ from: 'a@x.example', to: 'b@y.example', text: 'hi' }).compile();
  t.ok(node instanceof MimeNode, `compile() gives the MimeNode compose.ts types it as: ${COMPOSER}`);
  fingerprints(t, 'nodemailer/lib/mail-composer', { compile: '2eec2c5b341b813b' }, COMPOSER);
});

t.test('nodemailer/lib/smtp-pool SMTPPool: the options, error event, send(mail, cb) with a bare message object, and close() transports.ts uses', async (t) => {
  const pool = new SMTPPool({ host: '127.0.0.1', port: 1, maxRequeues: 1, idleTimeout: 1000, logger: false });
  t.ok(pool instanceof EventEmitter, `the pool emits 'error': ${POOL}`);
  t.equal((pool as unknown as { options: { maxRequeues: number } }).options.maxRequeues, 1, POOL);
  t.equal((pool as unknown as { supportsAbortSignal: boolean }).supportsAbortSignal, true, `mail.data.signal is read: ${POOL}`);
  pool.close();

  const sink = await startSmtpSink(t);
  const transports = new Transports(loadConfig({}), pino({ level: 'silent' }));
  t.teardown(() => transports.close());
  const dest = { host: 'mx.example', address: sink.host, port: sink.port };
  // No final line break: sendRaw adds it, as nodemailer's LastNewline would.
  const raw = Buffer.from('From: a@send.example\r\nTo: b@rcpt.example\r\nSubject: hi\r\n\r\nhello');
  const sent = await transports.send(dest, { from: 'a@send.example', to: 'b@rcpt.example' }, raw, AbortSignal.timeout(5000));
  t.match(sent, { outcome: { kind: 'reply', code: 250 }, connectionLevel: false }, POOL);
  t.same(
    sink.messages.map((m) => ({ from: m.from, to: m.to, raw: m.raw.toString() })),
    [{ from: 'a@send.example', to: ['b@rcpt.example'], raw: `${raw.toString()}\r\n` }],
    `the envelope from getEnvelope() and the bytes from createReadStream() reach the server as they are: ${POOL}`,
  );
  sink.answerFor('gone@rcpt.example', { code: 550, text: '5.1.1 User unknown' });
  const refused = await transports.send(dest, { from: 'a@send.example', to: 'gone@rcpt.example' }, raw, AbortSignal.timeout(5000));
  t.match(
    refused,
    { outcome: { kind: 'reply', code: 550, text: /5\.1\.1 User unknown/ }, connectionLevel: false },
    `a refusal's error carries responseCode, response and command: ${POOL}`,
  );
  fingerprints(t, 'nodemailer/lib/smtp-pool', { constructor: '6412088784e88c34', send: 'f2881f01e361d834', close: '90efc7e24ae3d6fc' }, POOL);
  fingerprints(
    t,
    'nodemailer/lib/smtp-pool',
    { send: 'f6d38da473a9e64a' },
    `the pool resource reads getEnvelope, messageId, createReadStream: ${POOL}`,
    'pool-resource.js',
  );
});
