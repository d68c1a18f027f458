// Reads an uploaded NDJSON file (one JSON object per line) as objects with their line numbers, in bounded memory.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** One non-blank line: its object, or why it is not one. */
export type JsonRecord = { line: number; value: Record<string, unknown>; error?: undefined } | { line: number; value?: undefined; error: string };

/** The lines of a byte stream (LF or CRLF), each at most maxBytes: a longer line comes back as `tooLong` without its bytes. */
export async function* lines(chunks: AsyncIterable<Buffer>, maxBytes: number): AsyncGenerator<{ line: number; bytes: Buffer } | { line: number; tooLong: true }> {
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let line = 1;
  const take = (): { line: number; bytes: Buffer } | { line: number; tooLong: true } => {
    const out = tooLong ? { line, tooLong: true as const } : { line, bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts, size) };
    parts = [];
    size = 0;
    tooLong = false;
    line++;
    return out;
  };
  const add = (piece: Buffer) => {
    if (tooLong || piece.length === 0) return;
    if (size + piece.length > maxBytes) {
      // Past the limit the line's bytes are dropped as they come: memory stays bounded whatever its length.
      tooLong = true;
      parts = [];
      size = 0;
      return;
    }
    parts.push(piece);
    size += piece.length;
  };
  for await (const chunk of chunks) {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); nl !== -1; nl = chunk.indexOf(10, start)) {
      add(chunk.subarray(start, nl));
      yield take();
      start = nl + 1;
    }
    // Copied: a slice would keep the whole chunk alive.
    if (start < chunk.length) add(Buffer.from(chunk.subarray(start)));
  }
  if (size > 0 || tooLong) yield take();
}

/**
 * Yields each non-blank line's object in file order. A UTF-8 BOM opening the file is dropped, a CR before the LF
 * too. A line that is not UTF-8, not JSON, not an object, or longer than maxBytes is one invalid record.
 */
export async function* ndjsonRecords(chunks: AsyncIterable<Buffer>, options: { maxRecordBytes: number }): AsyncGenerator<JsonRecord> {
  for await (const l of lines(chunks, options.maxRecordBytes)) {
    if ('tooLong' in l) {
      yield { line: l.line, error: `the line is longer than ${options.maxRecordBytes} bytes` };
      continue;
    }
    let bytes = l.bytes;
    if (l.line === 1 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) bytes = bytes.subarray(3);
    if (bytes[bytes.length - 1] === 13) bytes = bytes.subarray(0, bytes.length - 1);
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      yield { line: l.line, error: 'invalid UTF-8' };
      continue;
    }
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { line: l.line, error: 'not valid JSON' };
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      yield { line: l.line, error: 'must be a JSON object (one contact per line)' };
      continue;
    }
    yield { line: l.line, value: value as Record<string, unknown> };
  }
}
