// Reads a stored inbound message for the API with mailparser: headers, addresses, bodies and attachment metadata (never content).
import type { AddressObject, EmailAddress, HeaderLines, ParsedMail } from 'mailparser';
import { simpleParser } from '../../kernel/mail-parser.js';

/**
 * Messages above this are not parsed in full: simpleParser buffers every attachment in memory, so a
 * few concurrent reads of 50 MB messages would cost gigabytes. Their headers are still read; the
 * bodies stay available whole through the raw download.
 */
export const PARSE_MAX_BYTES = 10 * 1024 * 1024;
/** The header section read of an over-size message; no real header block comes close. */
const HEADER_MAX_BYTES = 256 * 1024;

export interface Address {
  name: string | null;
  address: string | null;
}

export interface AttachmentInfo {
  filename: string | null;
  content_type: string;
  size: number;
  content_id: string | null;
  disposition: string | null;
}

export interface MessageView {
  /** Every header field in order, unfolded, values as sent (encoded-words are not decoded). */
  headers: { name: string; value: string }[];
  from: Address[];
  to: Address[];
  cc: Address[];
  reply_to: Address[];
  subject: string | null;
  date: string | null;
  message_id: string | null;
  in_reply_to: string | null;
  references: string[];
  text: string | null;
  html: string | null;
  attachments: AttachmentInfo[];
  /** Every Authentication-Results value, top first: the first is Mailpath's own; any below came with the message. */
  authentication_results: string[];
  /** False when the message was over the parse cap: only its headers were read (bodies and attachments empty). */
  body_parsed: boolean;
}

const unfold = (value: string) => value.replace(/\r?\n[ \t]+/g, ' ').trim();

function headerList(lines: HeaderLines): { name: string; value: string }[] {
  return lines.map(({ line }) => {
    const colon = line.indexOf(':');
    return colon < 0 ? { name: line.trim(), value: '' } : { name: line.slice(0, colon).trim(), value: unfold(line.slice(colon + 1)) };
  });
}

function flatten(list: EmailAddress[]): Address[] {
  return list.flatMap((a) => (a.group ? flatten(a.group) : [{ name: a.name || null, address: a.address || null }]));
}

function addresses(value: AddressObject | AddressObject[] | undefined): Address[] {
  if (!value) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((o) => flatten(o.value));
}

function view(mail: ParsedMail, bodyParsed: boolean): MessageView {
  const headers = headerList(mail.headerLines ?? []);
  // Read from the header itself: mailparser puts the current time in place of an unreadable Date.
  const dateHeader = headers.find((h) => h.name.toLowerCase() === 'date');
  const parsedDate = dateHeader ? new Date(dateHeader.value) : undefined;
  const date = parsedDate && !Number.isNaN(parsedDate.getTime()) ? parsedDate.toISOString() : null;
  const references = mail.references === undefined ? [] : Array.isArray(mail.references) ? mail.references : [mail.references];
  return {
    headers,
    from: addresses(mail.from),
    to: addresses(mail.to),
    cc: addresses(mail.cc),
    reply_to: addresses(mail.replyTo),
    subject: mail.subject ?? null,
    date,
    message_id: mail.messageId ?? null,
    in_reply_to: mail.inReplyTo ?? null,
    references,
    text: bodyParsed ? mail.text || null : null,
    html: bodyParsed && mail.html ? mail.html : null,
    attachments: bodyParsed
      ? mail.attachments.map((a) => ({
          filename: a.filename ?? null,
          content_type: a.contentType,
          size: a.size,
          content_id: a.cid ?? null,
          disposition: a.contentDisposition ?? null,
        }))
      : [],
    authentication_results: headers.filter((h) => h.name.toLowerCase() === 'authentication-results').map((h) => h.value),
    body_parsed: bodyParsed,
  };
}

// text is the text/plain part as sent: no HTML-to-text conversion (costly on hostile HTML), cid: links kept.
const OPTIONS = { skipHtmlToText: true, skipTextToHtml: true, skipTextLinks: true, skipImageLinks: true, keepCidLinks: true } as const;

/** The header block of a message (up to the first empty line), capped, ending in an empty line. */
function headerBlock(raw: Buffer): Buffer {
  const window = raw.subarray(0, HEADER_MAX_BYTES);
  const crlf = window.indexOf('\r\n\r\n');
  const lf = window.indexOf('\n\n');
  const ends = [crlf, lf].filter((i) => i >= 0);
  const end = ends.length > 0 ? Math.min(...ends) : window.length;
  return Buffer.concat([window.subarray(0, end), Buffer.from('\r\n\r\n')]);
}

/** Parses a stored message; one over `maxBytes`, or one the parser chokes on, is read for its headers only. */
export async function parseStoredMessage(raw: Buffer, maxBytes = PARSE_MAX_BYTES): Promise<MessageView> {
  if (raw.length <= maxBytes) {
    try {
      return view(await simpleParser(raw, OPTIONS), true);
    } catch {
      // Falls through to the headers: a broken body must not hide who sent the message.
    }
  }
  return view(await simpleParser(headerBlock(raw), OPTIONS), false);
}
