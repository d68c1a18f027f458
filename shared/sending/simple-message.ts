// The common outbound message (a text and/or an HTML body, no attachments) built in one pass: the header fields nodemailer's composer writes, in its order,
// encoded and folded by nodemailer's own functions, and the bodies as 7bit or quoted-printable with CRLF line breaks.
import { randomBytes } from 'node:crypto';
import MimeNode from 'nodemailer/lib/mime-node';
import { buildHeaderValue, foldLines, hasLongerLines } from 'nodemailer/lib/mime-funcs';
import type { OutboundContent } from './outbound-content.js';
import { quotedPrintable } from './quoted-printable.js';

/** What the simple builder takes: compose.ts's content, without attachments. */
export type SimpleContent = Omit<OutboundContent, 'attachments'>;

/** The header encoders of a MimeNode (public in nodemailer, missing from its type definitions). */
interface HeaderEncoder {
  encodeHeaderValue(key: string, value: unknown): string;
  _normalizeHeaderKey(key: string): string;
}

// One node for its encoders only: they read nothing but its options (defaults here), so it is shared.
const encoder = new MimeNode('text/plain') as unknown as HeaderEncoder;
const BARE_LF = /(?<!\r)\n/g;

// Field names repeat on every message, and so do many values (From, Reply-To, the list headers of a campaign): their
// folded fields are kept, a bounded number of them.
const names = new Map<string, string>();
/** Fields nodemailer parses (addresses, ids, dates, MIME parameters); the others are text. */
const STRUCTURED = new Set([
  'From',
  'Sender',
  'To',
  'Cc',
  'Bcc',
  'Reply-To',
  'Message-ID',
  'In-Reply-To',
  'Content-ID',
  'References',
  'Date',
  'Content-Type',
  'Content-Disposition',
  'OTP-Token',
]);
/** Printable ASCII that encodeWords leaves alone: no quote, nothing that looks like an encoded word. */
const PLAIN_TEXT = /^(?!.*=\?)[\x20\x21\x23-\x7e]*$/;
const fields = new Map<string, string[]>();
const MAX_KEPT = 2000;

/** A header field as nodemailer writes it: the key normalized, the value encoded, folded at 76; none for an empty value. */
function field(key: string, value: string | Date | { name: string; address: string }): string[] {
  let name = names.get(key);
  if (name === undefined) {
    name = encoder._normalizeHeaderKey(key);
    if (names.size < MAX_KEPT) names.set(key, name);
  }
  const memo = typeof value === 'string' ? `${name}\0${value}` : undefined;
  const known = memo === undefined ? undefined : fields.get(memo);
  if (known) return known;
  // Plain text in an unstructured field is what encodeWords gives back unchanged.
  const encoded = typeof value === 'string' && !STRUCTURED.has(name) && PLAIN_TEXT.test(value) ? value : encoder.encodeHeaderValue(name, value);
  const lines = encoded.trim() === '' ? [] : [foldLines(`${name}: ${encoded}`, 76)];
  if (memo !== undefined) {
    if (fields.size >= MAX_KEPT) fields.clear();
    fields.set(memo, lines);
  }
  return lines;
}

const NON_LATIN = /[\x00-\x08\x0b\x0c\x0e-\x1f\u0080-\uFFFF]/g;
const LATIN = /[A-Za-z]/g;

/** How many matches of a global `re` the text has, counting no further than `limit`. */
function countUpTo(re: RegExp, text: string, limit: number): number {
  re.lastIndex = 0;
  let n = 0;
  while (n < limit && re.exec(text) !== null) n++;
  return n;
}

/**
 * How nodemailer would encode a text body: 7bit (plain, short lines), quoted-printable (more Latin letters than
 * 8-bit and control characters: MimeNode's _getTextEncoding, which counts every character; here the counting stops
 * once the answer is known), or base64 (left to nodemailer).
 */
function transferEncoding(body: string): '7bit' | 'quoted-printable' | 'base64' {
  // No 8-bit or control character is nodemailer's isPlainText.
  const nonLatin = countUpTo(NON_LATIN, body, body.length);
  if (nonLatin === 0 && !hasLongerLines(body, 76)) return '7bit';
  return countUpTo(LATIN, body, nonLatin + 1) > nonLatin ? 'quoted-printable' : 'base64';
}

/** Random bytes for multipart boundaries, drawn from a pool: one system call per 512 messages instead of one each. */
let pool = Buffer.alloc(0);
let poolAt = 0;
function boundaryId(): string {
  if (poolAt + 8 > pool.length) {
    pool = randomBytes(4096);
    poolAt = 0;
  }
  poolAt += 8;
  return pool.toString('hex', poolAt - 8, poolAt);
}

interface Part {
  type: string;
  encoding: '7bit' | 'quoted-printable';
  body: string;
}

const partOf = (type: string, body: string): Part | undefined => {
  const encoding = transferEncoding(body);
  if (encoding === 'base64') return undefined;
  return { type: `${type}; charset=utf-8`, encoding, body: encoding === '7bit' ? body.replace(BARE_LF, '\r\n') : quotedPrintable(body) };
};

/**
 * The message, or undefined when it is not of the simple shape (attachments, no body, a body nodemailer would write
 * in base64): compose.ts then builds it with nodemailer. The header section is nodemailer's byte for byte (custom
 * headers first, then From, To, Reply-To, Subject, Message-ID, Date, MIME-Version and Content-Type; a single part
 * also gets its Content-Transfer-Encoding); line breaks are CRLF throughout, as DKIM signs them.
 */
export function simpleMessage(c: SimpleContent, boundary = `--_NmP-${boundaryId()}-Part_1`): Buffer | undefined {
  const parts: Part[] = [];
  for (const [type, body] of [
    ['text/plain', c.text],
    ['text/html', c.html],
  ] as const) {
    // An empty body is no part at all, as in nodemailer's composer.
    if (!body) continue;
    const part = partOf(type, body);
    if (!part) return undefined;
    parts.push(part);
  }
  if (parts.length === 0) return undefined;
  const lines: string[] = [];
  for (const [key, value] of Object.entries(c.headers ?? {})) lines.push(...field(key, value));
  lines.push(...field('From', c.from.name ? { name: c.from.name, address: c.from.address } : c.from.address), ...field('To', c.to));
  if (c.replyTo) lines.push(...field('Reply-To', c.replyTo));
  lines.push(...field('Subject', c.subject), ...field('Message-ID', `<${c.messageId}>`), ...field('Date', c.date));
  if (parts.length === 1) {
    const [part] = parts as [Part];
    lines.push(`Content-Transfer-Encoding: ${part.encoding}`, 'MIME-Version: 1.0', ...field('Content-Type', part.type));
    // The message ends with a line break, as nodemailer's LastNewline makes it.
    const body = part.body.endsWith('\n') ? part.body : part.body.endsWith('\r') ? `${part.body}\n` : `${part.body}\r\n`;
    return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
  }
  lines.push('MIME-Version: 1.0', ...field('Content-Type', buildHeaderValue({ value: 'multipart/alternative', params: { boundary } })));
  let out = `${lines.join('\r\n')}\r\n\r\n`;
  parts.forEach((part, i) => {
    out += `${i > 0 ? '\r\n' : ''}--${boundary}\r\n${field('Content-Type', part.type).join('')}\r\n`;
    out += `Content-Transfer-Encoding: ${part.encoding}\r\n\r\n${part.body}`;
  });
  return Buffer.from(`${out}\r\n--${boundary}--\r\n`);
}
