// Prepares a submitted message (RFC 6409): reads its header block, checks the identity fields (From, Sender, Resent-*), strips Bcc, adds Message-ID and Date
// when missing, keeps the rest byte-for-byte.
import { randomUUID } from 'node:crypto';
import { simpleParser } from '../../shared/kernel/mail-parser.js';
import { AppError } from '../../shared/kernel/errors.js';
import { normalizeEmail } from '../../shared/audiences/suppressions/service.js';
import { smtpError } from '../smtp/replies.js';
import { readMailbox } from './mailbox.js';

export interface PreparedMessage {
  /** The message to sign and store: Bcc removed, Message-ID and Date present. */
  bytes: Buffer;
  /** The Message-ID, without angle brackets. */
  messageId: string;
  subject: string;
  /** The one From address, normalized (lower-case, A-label domain). */
  from: { address: string; name?: string | undefined };
  /** The Sender address, normalized, when the message has one (its domain must be the tenant's too). */
  sender?: string | undefined;
}

interface HeaderField {
  /** Lower-cased field name; '' for a line that is not a field (kept as it is). */
  name: string;
  /** The field's bytes, continuation lines and line endings included. */
  raw: Buffer;
}

const CRLF = Buffer.from('\r\n');

/**
 * Splits, checks and completes a submitted message. Throws an SmtpError when the header block is
 * unusable: 550 5.6.0 for a From or Sender that is not exactly one strictly formed mailbox (or is
 * given twice), 550 5.1.7 for an invalid address in one, 550 5.7.1 for any Resent-* field.
 */
export async function prepareMessage(data: Buffer, m: { hostname: string; now: Date; maxSubjectLength: number }): Promise<PreparedMessage> {
  const { head, body } = splitHead(data);
  const fields = headerFields(head);
  const fromFields = fields.filter((f) => f.name === 'from');
  if (fromFields.length !== 1) {
    throw smtpError(550, '5.6.0', fromFields.length === 0 ? 'the message has no From header' : 'the message has more than one From header');
  }
  const senderFields = fields.filter((f) => f.name === 'sender');
  if (senderFields.length > 1) throw smtpError(550, '5.6.0', 'the message has more than one Sender header');
  // A re-sending names its own From and Sender (RFC 5322 §3.6.6), which some clients show instead of
  // the From: a submission is never one, and the API refuses these fields too.
  const resent = fields.find((f) => f.name.startsWith('resent-'));
  if (resent) throw smtpError(550, '5.7.1', `Resent- header fields are not accepted (${fieldName(resent)}): submit the message as a new one`);
  const fromAddress = strictMailbox(fromFields[0]!, 'From');
  const sender = senderFields[0] && strictMailbox(senderFields[0], 'Sender');
  // RFC 6409 §8 lets the submission server drop blind-copy fields; they must never reach a recipient.
  const kept = fields.filter((f) => f.name !== 'bcc');
  const parsed = await simpleParser(Buffer.concat([...kept.map((f) => f.raw), CRLF]), {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipImageLinks: true,
    skipTextLinks: true,
  });

  const from = fromOf(fromAddress, parsed.from?.value ?? []);
  const added: Buffer[] = [];
  let messageId: string;
  if (fields.some((f) => f.name === 'message-id')) {
    // A Message-ID the client set is kept as it is, so it must be one the send can be found by.
    const given = bareMessageId(parsed.messageId);
    if (given === undefined) throw smtpError(550, '5.6.0', 'the Message-ID header is malformed: expected <id@domain>');
    messageId = given;
  } else {
    messageId = `${randomUUID()}@${m.hostname}`;
    added.push(Buffer.from(`Message-ID: <${messageId}>\r\n`));
  }
  if (!fields.some((f) => f.name === 'date')) added.push(Buffer.from(`Date: ${rfc5322Date(m.now)}\r\n`));
  return {
    bytes: Buffer.concat([...added, ...kept.map((f) => f.raw), body]),
    messageId,
    subject: (parsed.subject ?? '').slice(0, m.maxSubjectLength),
    from,
    ...(sender ? { sender } : {}),
  };
}

/** The header block (through the last header's line ending) and the rest (from the blank line on). */
function splitHead(data: Buffer): { head: Buffer; body: Buffer } {
  // A message may open with the blank line itself: no header fields at all.
  if (data.subarray(0, 2).equals(CRLF)) return { head: Buffer.alloc(0), body: data };
  const crlf = data.indexOf('\r\n\r\n');
  const lf = data.indexOf('\n\n');
  let end: number;
  if (crlf >= 0 && (lf < 0 || crlf < lf)) end = crlf + 2;
  else if (lf >= 0) end = lf + 1;
  else {
    // Headers only, no body: close the last line so the blank line that ends the block follows it.
    const head = data.length > 0 && data[data.length - 1] !== 0x0a ? Buffer.concat([data, CRLF]) : data;
    return { head, body: CRLF };
  }
  return { head: data.subarray(0, end), body: data.subarray(end) };
}

/** Groups header lines into fields; a line starting with white space continues the field before it. */
function headerFields(head: Buffer): HeaderField[] {
  const fields: HeaderField[] = [];
  let start = 0;
  while (start < head.length) {
    const newline = head.indexOf(0x0a, start);
    const end = newline < 0 ? head.length : newline + 1;
    const line = head.subarray(start, end);
    const continues = (line[0] === 0x20 || line[0] === 0x09) && fields.length > 0;
    if (continues) {
      const last = fields[fields.length - 1]!;
      last.raw = Buffer.concat([last.raw, line]);
    } else {
      const colon = line.indexOf(':');
      const name = colon > 0 ? line.subarray(0, colon).toString('latin1').trim().toLowerCase() : '';
      fields.push({ name, raw: line });
    }
    start = end;
  }
  return fields;
}

/** The field's name as the client wrote it. */
function fieldName(f: HeaderField): string {
  return f.raw.subarray(0, f.raw.indexOf(':')).toString('latin1').trim();
}

/** The one address of a From or Sender field, strictly read (mailbox.ts) and normalized; an SmtpError otherwise. */
function strictMailbox(f: HeaderField, label: string): string {
  const reading = readMailbox(f.raw.subarray(f.raw.indexOf(':') + 1));
  if (reading.error !== undefined) throw smtpError(550, '5.6.0', `the ${label} header ${reading.error}`);
  try {
    return normalizeEmail(reading.address, `${label} header`);
  } catch (err) {
    if (err instanceof AppError) throw smtpError(550, '5.1.7', err.message);
    throw err;
  }
}

/**
 * The From as the strict reading found it, with mailparser's decoded display name. Both readings
 * must name the same one address: where they differ, some recipient's software would too.
 */
function fromOf(address: string, list: { address?: string | undefined; name: string; group?: unknown[] | undefined }[]): PreparedMessage['from'] {
  const entry = list.length === 1 ? list[0]! : undefined;
  let lenient: string | undefined;
  try {
    lenient = entry && !entry.group && entry.address ? normalizeEmail(entry.address) : undefined;
  } catch {
    lenient = undefined;
  }
  if (lenient !== address) throw smtpError(550, '5.6.0', 'the From header is ambiguous: mail software would not all read the same one address in it');
  return entry!.name ? { address, name: entry!.name } : { address };
}

/** The id inside a Message-ID value, or undefined when it is not of the form id@domain. */
function bareMessageId(value: string | undefined): string | undefined {
  const id = value?.trim().replace(/^<|>$/g, '');
  return id && /^[^\s<>@]+@[^\s<>@]+$/.test(id) && id.length <= 995 ? id : undefined;
}

/** RFC 5322 date-time in UTC: "Tue, 02 Jan 2024 03:04:05 +0000". */
export function rfc5322Date(at: Date): string {
  return at.toUTCString().replace(/GMT$/, '+0000');
}
