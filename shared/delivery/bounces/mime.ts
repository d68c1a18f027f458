// Reads the MIME side of a report: the message as mailparser sees it, the report parts, RFC 822-style field groups, and the headers of the embedded original
// message.
import type { Attachment, ParsedMail, SimpleParserOptions } from 'mailparser';
import { simpleParser } from '../../kernel/mail-parser.js';
import { bareAddress, bareMessageId } from './addresses.js';

/**
 * keepDeliveryStatus: the delivery-status part is an attachment we read, not body text.
 * ignoreEmbedded (a mailsplit option mailparser passes on, missing from its types): an embedded
 * message/rfc822 part stays one attachment, even with Content-Disposition: inline, instead of
 * being spliced into the body, so the original's headers stay readable.
 */
const OPTIONS = { keepDeliveryStatus: true, ignoreEmbedded: true, skipImageLinks: true, skipTextToHtml: true, skipTextLinks: true } as SimpleParserOptions;

export function parseMail(raw: Buffer): Promise<ParsedMail> {
  return simpleParser(raw, OPTIONS);
}

/** The first part of one of `types`, wherever it sits in the MIME tree. */
export function partOf(mail: ParsedMail, types: readonly string[]): Attachment | undefined {
  return mail.attachments.find((a) => types.includes(a.contentType.toLowerCase()));
}

/** The part's text (report parts are US-ASCII, or UTF-8 for RFC 6533's message/global-*). */
export function partText(part: Attachment): string {
  return part.content.toString('utf8');
}

/** One block of `Name: value` fields: lower-cased names, each with its values in order (unfolded). */
export type FieldGroup = Map<string, string[]>;

/**
 * Splits a delivery-status or feedback-report body into its field groups (separated by blank
 * lines), unfolding continuation lines. Lines that are not fields are skipped: reports from the
 * wild are not always clean.
 */
export function fieldGroups(text: string): FieldGroup[] {
  const groups: FieldGroup[] = [];
  let group: FieldGroup = new Map();
  let last: { name: string; index: number } | undefined;
  const close = () => {
    if (group.size > 0) groups.push(group);
    group = new Map();
    last = undefined;
  };
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (line.trim() === '') {
      close();
      continue;
    }
    if (/^[ \t]/.test(line)) {
      if (last) {
        const values = group.get(last.name)!;
        values[last.index] = `${values[last.index]} ${line.trim()}`.trim();
      }
      continue;
    }
    const match = /^([!-9;-~]+)[ \t]*:[ \t]*(.*)$/.exec(line);
    if (!match) {
      last = undefined;
      continue;
    }
    const name = match[1]!.toLowerCase();
    const values = group.get(name) ?? [];
    values.push(match[2]!.trim());
    group.set(name, values);
    last = { name, index: values.length - 1 };
  }
  close();
  return groups;
}

/** The first value of a field, or null when absent or empty. */
export function field(group: FieldGroup | undefined, name: string): string | null {
  const value = group?.get(name)?.[0];
  return value === undefined || value === '' ? null : value;
}

/** `type; value` fields (Final-Recipient, Remote-MTA, Diagnostic-Code): the value without its type. */
export function typedValue(value: string | null): string | null {
  if (value === null) return null;
  const semicolon = value.indexOf(';');
  const rest = (semicolon >= 0 ? value.slice(semicolon + 1) : value).trim();
  return rest === '' ? null : rest;
}

/** What intake needs from the original message a report quotes (its third part). */
export interface OriginalHeaders {
  message_id: string | null;
  /** The envelope sender the receiving side recorded: our VERP address when the copy is faithful. */
  return_path: string | null;
  to: string[];
  subject: string | null;
}

const ORIGINAL_TYPES = ['message/rfc822', 'text/rfc822-headers', 'message/global', 'message/global-headers', 'message/rfc822-headers'];

/** The headers of the quoted original, or null when the report quotes none. */
export async function originalHeaders(mail: ParsedMail): Promise<OriginalHeaders | null> {
  const part = partOf(mail, ORIGINAL_TYPES);
  if (!part) return null;
  // A headers-only part may lack the blank line that ends a header block.
  const content =
    part.content.length > 0 && !/\r?\n\r?\n/.test(part.content.toString('latin1')) ? Buffer.concat([part.content, Buffer.from('\r\n\r\n')]) : part.content;
  const original = await simpleParser(content, OPTIONS);
  const returnPath = original.headers.get('return-path');
  const toObjects = original.to === undefined ? [] : Array.isArray(original.to) ? original.to : [original.to];
  return {
    message_id: bareMessageId(original.messageId) ?? null,
    return_path: bareAddress(typeof returnPath === 'string' ? returnPath : addressText(returnPath)) ?? null,
    to: toObjects.flatMap((o) => o.value.flatMap((v) => (v.address ? [v.address.toLowerCase()] : []))),
    subject: original.subject ?? null,
  };
}

function addressText(value: unknown): string | undefined {
  if (value && typeof value === 'object' && 'text' in value && typeof value.text === 'string') return value.text;
  return undefined;
}

/**
 * A multi-line SMTP reply as one line: "550-5.1.1 The account … 550-5.1.1 double-checking …" →
 * "550 5.1.1 The account … double-checking …" (the code and status repeated on each line say nothing).
 */
export function tidyReply(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const head = /^(\d{3})[ -](?:([245]\.\d{1,3}\.\d{1,3}) )?/.exec(flat);
  if (!head) return flat;
  const [, code, status] = head;
  const repeated = new RegExp(` ${code}[ -]${status ? `(?:${status.replace(/\./g, '\\.')} +)?` : ''}`, 'g');
  return `${code} ${status ? `${status} ` : ''}${flat.slice(head[0].length).replace(repeated, ' ').replace(/ {2,}/g, ' ')}`.trim();
}

/** The Message-ID and Return-path of an original quoted as plain text below a bounce (qmail, Exim). */
export function quotedOriginal(text: string): OriginalHeaders | null {
  const messageId = /^Message-ID:[ \t]*(<[^<>\s]+>)/im.exec(text)?.[1];
  const returnPath = /^Return-path:[ \t]*(<[^<>\s]*>)/im.exec(text)?.[1];
  if (!messageId && !returnPath) return null;
  return { message_id: bareMessageId(messageId) ?? null, return_path: bareAddress(returnPath) ?? null, to: [], subject: null };
}
