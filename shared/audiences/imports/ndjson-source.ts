// Reads an uploaded NDJSON file (one JSON object per line) as objects with their line numbers, in bounded memory.
import { lines } from './lines.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** One non-blank line: its object, or why it is not one. */
export type JsonRecord = { line: number; value: Record<string, unknown>; error?: undefined } | { line: number; value?: undefined; error: string };

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
