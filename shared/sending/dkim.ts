// DKIM-signs an outbound message with the sending domain's live key: mailauth's relaxed/relaxed canonicalization (its header steps as dkim-header.ts writes
// them), rsa-sha256 with a parsed key kept per domain.
import { createHash, createPrivateKey, sign, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import { dkimBody } from 'mailauth/lib/dkim/body/index.js';
import { headerSigning } from './dkim-header.js';

export interface DkimSigningKey {
  domain: string;
  selector: string;
  /** The private key: PEM, or already parsed (parsing a PEM costs more than the signature itself). */
  privateKey: string | KeyObject;
}

/**
 * The headers covered when present: the identity and content headers receivers judge (From, To,
 * Subject, Date, Message-ID, MIME), the list and threading headers, and Feedback-ID (campaign mail: a feedback
 * loop trusts it only when signed).
 */
const SIGNED_HEADERS = [
  'from',
  'to',
  'cc',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'list-unsubscribe',
  'list-unsubscribe-post',
  'feedback-id',
  'in-reply-to',
  'references',
];
const SIGNED = new Set(SIGNED_HEADERS);
/** With a callback, Node signs on the libuv thread pool: the RSA work leaves the event loop. */
const signOffThread = promisify((data: Buffer, key: KeyObject, done: (err: Error | null, signature: Buffer) => void) => sign('sha256', data, key, done));
const BARE_LF = /(?<!\r)\n/g;

/** Whether a line ends in LF alone (a byte scan: composed messages have none, and most are never copied into a string). */
function hasBareLf(message: Buffer): boolean {
  for (let at = message.indexOf(0x0a); at !== -1; at = message.indexOf(0x0a, at + 1)) {
    if (at === 0 || message[at - 1] !== 0x0d) return true;
  }
  return false;
}

const WSP_RUN = /[ \t]+/g;
const SPACE_AT_LINE_END = / \r\n/g;
const TRAILING_LINE_BREAKS = /(?:\r\n)+$/;
const TWO_SPACES = Buffer.from('  ', 'latin1');
const SPACE_CRLF = Buffer.from(' \r\n', 'latin1');

/**
 * The relaxed body hash (RFC 6376 §3.4.4) of a body of CRLF lines, computed on the whole body at once: whitespace runs
 * become one space, whitespace at line ends goes, empty lines at the end go, and a non-empty body ends in CRLF.
 * Undefined for a body with a CR outside CRLF or without a final line break, which mailauth's byte-by-byte
 * canonicalization handles (the results are the same; this is several times faster on an 8 KB message).
 */
export function relaxedBodyHash(body: Buffer): string | undefined {
  if (body.length > 0 && (body[body.length - 1] !== 0x0a || body[body.length - 2] !== 0x0d)) return undefined;
  for (let at = body.indexOf(0x0d); at !== -1; at = body.indexOf(0x0d, at + 1)) {
    if (body[at + 1] !== 0x0a) return undefined;
  }
  // A composed body usually has nothing to canonicalize (quoted-printable writes no trailing space, and markup seldom
  // has runs of spaces or tabs): then it is hashed as it is, up to its last non-empty line, without a copy.
  if (body.indexOf(0x09) === -1 && body.indexOf(TWO_SPACES) === -1 && body.indexOf(SPACE_CRLF) === -1) {
    let end = body.length;
    while (end >= 2 && body[end - 1] === 0x0a && body[end - 2] === 0x0d) end -= 2;
    const hash = createHash('sha256');
    if (end > 0) hash.update(body.subarray(0, end)).update('\r\n', 'latin1');
    return hash.digest('base64');
  }
  const lines = body.toString('latin1').replace(WSP_RUN, ' ').replace(SPACE_AT_LINE_END, '\r\n').replace(TRAILING_LINE_BREAKS, '');
  return createHash('sha256')
    .update(lines.length > 0 ? `${lines}\r\n` : '', 'latin1')
    .digest('base64');
}

function bodyHashOf(body: Buffer): string {
  const fast = relaxedBodyHash(body);
  if (fast !== undefined) return fast;
  const hasher = dkimBody('relaxed', 'sha256', false);
  hasher.update(body);
  return hasher.digest('base64');
}

export class DkimSignError extends Error {
  override name = 'DkimSignError';
}

/** Parses a PEM private key once, for signing many messages. */
export function parseSigningKey(pem: string): KeyObject {
  return createPrivateKey(pem);
}

/**
 * The message with its DKIM-Signature header prepended. mailauth's own signer (dkimSign) parses
 * the PEM for every message, which costs more than the RSA signature; this takes the same steps
 * (test/scenarios/libraries/mailauth-internals.test.ts holds it to dkimSign's signature) with a key
 * parsed once, the body hashed whole, and the header block canonicalized as one string.
 */
export async function signMessage(input: Buffer, key: DkimSigningKey, at: Date): Promise<Buffer> {
  // Bodies are canonicalized on CRLF lines; a bare LF would be signed as something else than sent.
  const message = hasBareLf(input) ? Buffer.from(input.toString('latin1').replace(BARE_LF, '\r\n'), 'latin1') : input;
  const split = message.indexOf('\r\n\r\n');
  if (split < 0) throw new DkimSignError('the message has no header/body separator');
  const privateKey = typeof key.privateKey === 'string' ? parseSigningKey(key.privateKey) : key.privateKey;
  if (privateKey.asymmetricKeyType !== 'rsa') throw new DkimSignError(`DKIM signing for ${key.domain} needs an RSA key, not ${privateKey.asymmetricKeyType}`);
  const signing = headerSigning(message.toString('latin1', 0, split + 2), SIGNED, {
    domain: key.domain,
    selector: key.selector,
    time: Math.floor(at.getTime() / 1000),
    bodyHash: bodyHashOf(message.subarray(split + 4)),
  });
  const signature = (await signOffThread(signing.canonical, privateKey)).toString('base64');
  return Buffer.concat([Buffer.from(`${signing.field(signature)}\r\n`, 'latin1'), message]);
}
