// A light read of a received message's header block: Message-ID, From and Subject for the stored row (no MIME parse of the body).

export interface HeaderSummary {
  /** The Message-ID without angle brackets. */
  messageId: string | null;
  /** The From field, encoded words decoded (e.g. `Ann Example <ann@example.org>`). */
  from: string | null;
  subject: string | null;
}

/** Past this many bytes a header block is not read further (the fields that matter come early). */
const MAX_HEAD_BYTES = 256 * 1024;
/** Longest value kept for a column (a subject may be folded over many lines). */
const MAX_VALUE_CHARS = 2000;
const WANTED = new Set(['message-id', 'from', 'subject']);
const DELIVERY_FIELDS = ['delivered-to', 'x-original-to', 'envelope-to'];

/** The first field of each name in `wanted` (lower-case) in the message's header block, unfolded, raw. */
export function firstFields(message: Buffer, wanted: ReadonlySet<string>): Map<string, string> {
  const found = new Map<string, string>();
  const head = message.subarray(0, Math.min(message.length, MAX_HEAD_BYTES));
  let current: { name: string; value: string } | undefined;
  const finish = () => {
    if (current && wanted.has(current.name) && !found.has(current.name)) found.set(current.name, current.value);
    current = undefined;
  };
  let start = 0;
  while (start < head.length) {
    const newline = head.indexOf(0x0a, start);
    const end = newline < 0 ? head.length : newline + 1;
    const line = head
      .subarray(start, end)
      .toString('utf8')
      .replace(/\r?\n$/, '');
    start = end;
    if (line === '') break; // the blank line that ends the header block
    if ((line[0] === ' ' || line[0] === '\t') && current) {
      current.value += line; // unfolding: the line break goes, the white space stays (RFC 5322 §2.2.3)
      continue;
    }
    finish();
    const colon = line.indexOf(':');
    if (colon <= 0) continue; // not a field (e.g. an mbox "From " line): skipped
    current = { name: line.slice(0, colon).trim().toLowerCase(), value: line.slice(colon + 1) };
  }
  finish();
  return found;
}

/** The first Message-ID, From and Subject fields of the message's header block. */
export function summarizeHeaders(message: Buffer): HeaderSummary {
  const found = firstFields(message, WANTED);
  const messageId = clean(found.get('message-id'));
  return {
    messageId: messageId === null ? null : messageId.replace(/^<\s*/, '').replace(/\s*>$/, '') || null,
    from: clean(decodeWords(found.get('from'))),
    subject: clean(decodeWords(found.get('subject'))),
  };
}

/** Trimmed, without NUL and other control characters PostgreSQL text or a list view cannot hold, bounded in length. */
function clean(value: string | undefined): string | null {
  if (value === undefined) return null;
  const text = value
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return text === '' ? null : text.slice(0, MAX_VALUE_CHARS);
}

const ENCODED_WORD = /=\?([^?*\s]+)(?:\*[^?\s]*)?\?([bBqQ])\?([^?\s]*)\?=/g;

/** RFC 2047 encoded words decoded; white space between two adjacent encoded words is dropped (§6.2). */
export function decodeWords(value: string | undefined): string | undefined {
  if (value === undefined || !value.includes('=?')) return value;
  const joined = value.replace(/(\?=)\s+(?==\?)/g, '$1');
  return joined.replace(ENCODED_WORD, (word, charset: string, encoding: string, text: string) => {
    const bytes =
      encoding.toUpperCase() === 'B'
        ? Buffer.from(text, 'base64')
        : Buffer.from(
            text.replace(/_/g, ' ').replace(/=([0-9a-f]{2})/gi, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
            'latin1',
          );
    try {
      return new TextDecoder(charset.toLowerCase()).decode(bytes);
    } catch {
      return word; // an unknown charset: left as it was
    }
  });
}

/**
 * The address a message fetched from a mailbox was delivered to, as the delivering server recorded it
 * (Delivered-To, X-Original-To or Envelope-To, in that order), lower-cased; null when none says.
 */
export function deliveredTo(message: Buffer): string | null {
  const found = firstFields(message, new Set(DELIVERY_FIELDS));
  for (const name of DELIVERY_FIELDS) {
    const value = clean(found.get(name))?.replace(/^<\s*/, '').replace(/\s*>$/, '');
    if (value && value.includes('@') && !/\s/.test(value)) return value.toLowerCase();
  }
  return null;
}
