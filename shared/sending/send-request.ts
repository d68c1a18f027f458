// Checks what a sender may put into a message (subject, names, custom headers, attachments) before anything is composed.
import type { LimitsConfig } from '../config/index.js';
import { validationError } from '../kernel/errors.js';
import type { OutboundAttachment } from './compose.js';

/** Headers the service writes itself: a sender setting them could forge identity, routing or MIME structure. */
const RESERVED_HEADERS = new Set([
  'from',
  'sender',
  'to',
  'cc',
  'bcc',
  'reply-to',
  'subject',
  'date',
  'message-id',
  'mime-version',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
  'content-id',
  // Trace and delivery fields (RFC 5321 §4.4, RFC 9228): written by the MTAs a message passes.
  'return-path',
  'received',
  'delivered-to',
  'x-original-to',
  'envelope-to',
  'original-recipient',
  // Where replies, bounces and receipts go (RFC 3798, legacy Errors-To / Return-Receipt-To): a
  // sender could redirect them away from the From address and the VERP bounce address.
  'errors-to',
  'return-receipt-to',
  'disposition-notification-to',
  'disposition-notification-options',
  // Authentication results and signatures (RFC 8601, RFC 6376, RFC 8617): only verifiers and our signer write them.
  'dkim-signature',
  'domainkey-signature',
  'authentication-results',
  'received-spf',
  'list-unsubscribe',
  'list-unsubscribe-post',
]);

/**
 * Whole families of reserved fields: Resent-* (RFC 5322 §3.6.6, a re-sending names its own From,
 * Sender, To) and ARC-* (RFC 8617, a sealed chain only intermediaries add).
 */
const RESERVED_PREFIXES = ['resent-', 'arc-'];

/** True for a header name (any case) the service writes itself or that only MTAs and verifiers may add. */
export function isReservedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return RESERVED_HEADERS.has(lower) || RESERVED_PREFIXES.some((p) => lower.startsWith(p));
}

/** RFC 5322 field-name: printable US-ASCII except colon. */
const FIELD_NAME = /^[!-9;-~]{1,76}$/;
const LINE_BREAK = /[\r\n\u0085\u2028\u2029]/;
const STRICT_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const MIME_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,126}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}$/i;

/** A one-line text (subject, display name): CR/LF would start a new header, so it is refused, never stripped. */
export function oneLine(value: string, field: string, maxLength: number): string {
  if (LINE_BREAK.test(value)) throw validationError(field, 'must not contain line breaks (CR or LF)');
  if (/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/.test(value)) throw validationError(field, 'must not contain control characters');
  if (value.length > maxLength) throw validationError(field, `must be at most ${maxLength} characters`);
  return value;
}

export function checkBody(value: string | undefined, field: string, limits: LimitsConfig['send']): string | undefined {
  if (value === undefined) return undefined;
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > limits.max_body_bytes) throw validationError(field, `is ${bytes} bytes, more than the ${limits.max_body_bytes} allowed`);
  return value;
}

/** Custom headers as given, checked: valid names, no reserved ones, no line breaks, within the count limit. */
export function checkHeaders(headers: Record<string, string> | undefined, limits: LimitsConfig['send']): Record<string, string> | undefined {
  if (!headers) return undefined;
  const entries = Object.entries(headers);
  if (entries.length > limits.max_headers) throw validationError('headers', `at most ${limits.max_headers} custom headers`);
  const seen = new Set<string>();
  for (const [name, value] of entries) {
    const lower = name.toLowerCase();
    if (!FIELD_NAME.test(name))
      throw validationError(`headers.${name}`, 'is not a valid header name (printable ASCII, no colon or space, at most 76 characters)');
    if (isReservedHeader(name))
      throw validationError(
        `headers.${name}`,
        'is reserved (set by the service, or only by the mail servers and verifiers a message passes) and cannot be given; use the matching field ' +
          '(from_email, to, reply_to, subject) where there is one',
      );
    if (seen.has(lower)) throw validationError(`headers.${name}`, 'is given twice (header names are compared without case)');
    seen.add(lower);
    oneLine(value, `headers.${name}`, 998 - name.length - 2);
  }
  return headers;
}

export interface AttachmentInput {
  filename: string;
  content: string;
  content_type?: string | undefined;
}

/** Decodes base64 attachments, refusing anything that is not strict base64 and any total over the cap. */
export function checkAttachments(attachments: AttachmentInput[] | undefined, limits: LimitsConfig['send']): OutboundAttachment[] | undefined {
  if (!attachments || attachments.length === 0) return undefined;
  if (attachments.length > limits.max_attachments) throw validationError('attachments', `at most ${limits.max_attachments} attachments`);
  let total = 0;
  return attachments.map((a, i) => {
    const field = `attachments.${i}`;
    const filename = oneLine(a.filename, `${field}.filename`, 255);
    if (!filename.trim() || /[\\/]/.test(filename)) throw validationError(`${field}.filename`, 'must be a file name without path separators');
    const encoded = a.content.replace(/[ \t\r\n]/g, '');
    if (!STRICT_BASE64.test(encoded)) throw validationError(`${field}.content`, 'must be base64 (RFC 4648, padded)');
    const content = Buffer.from(encoded, 'base64');
    total += content.length;
    if (total > limits.max_attachment_bytes) {
      throw validationError('attachments', `decoded attachments exceed the ${limits.max_attachment_bytes} bytes allowed`);
    }
    if (a.content_type !== undefined && !MIME_TYPE.test(a.content_type))
      throw validationError(`${field}.content_type`, 'must be a MIME type such as application/pdf');
    return { filename, content, ...(a.content_type ? { contentType: a.content_type } : {}) };
  });
}
