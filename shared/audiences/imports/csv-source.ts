// Reads an uploaded CSV file as records with their line numbers: csv-parse over the stored chunks, each cell decoded as strict UTF-8.
import { parse, type InfoRecord, type Parser } from 'csv-parse';

/** A data record (after the header): its cells, or why it cannot be read. `line` is where the record starts. */
export type CsvRecord = { line: number; cells: string[]; error?: undefined } | { line: number; cells?: undefined; error: string };

/** The file cannot be read past `line`: the import stops there (rows before it are kept). */
export class FileError extends Error {
  override name = 'FileError';
}

/** Bytes handed to the parser at a time. */
const FEED_BYTES = 64 * 1024;

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** A cell's text, or undefined when its bytes are not UTF-8. */
function decode(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

interface Parsed {
  cells: Uint8Array[];
  /** Empty lines skipped so far (before this record). */
  emptyLines: number;
}

function feed(parser: Parser, chunk: Buffer | null): Promise<Error | undefined> {
  return new Promise((resolve) => {
    if (chunk === null) {
      parser.once('finish', () => resolve(undefined));
      parser.once('error', (err) => resolve(err));
      parser.end();
    } else {
      parser.write(chunk, (err) => resolve(err ?? undefined));
    }
  });
}

/** Line breaks inside a record's cells (CRLF, LF or a lone CR each one): csv-parse's own count takes a quoted CRLF for two. */
function breaksIn(cells: Uint8Array[]): number {
  let n = 0;
  for (const cell of cells) {
    if (cell.indexOf(10) === -1 && cell.indexOf(13) === -1) continue;
    for (let i = 0; i < cell.length; i++) {
      if (cell[i] === 10 || (cell[i] === 13 && cell[i + 1] !== 10)) n++;
    }
  }
  return n;
}

/** The per-file message for a parser error in the record starting at `line`. */
function describe(err: Error & { code?: string }, line: number): string {
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return `line ${line}: a quoted field is never closed (unbalanced quote); the file cannot be read past it`;
    case 'CSV_INVALID_CLOSING_QUOTE':
      return `line ${line}: text follows a closing quote (a quote inside a quoted field must be doubled: "")`;
    case 'INVALID_OPENING_QUOTE':
      return `line ${line}: a quote inside an unquoted field (quote the whole field and double the quote: "5"" screen")`;
    case 'CSV_MAX_RECORD_SIZE':
      return `line ${line}: the record is longer than the largest accepted (imports.max_record_bytes); the file cannot be read past it`;
    default:
      return `line ${line}: the file is not readable CSV (${err.message})`;
  }
}

/**
 * Yields the header (first) then every data record in file order. CRLF, LF and CR line ends may mix; a UTF-8 BOM is
 * dropped; empty lines and lines of blank cells are skipped. A record whose cell is not UTF-8 comes with an error.
 * A quote error or an over-long record ends the file: the records before it are yielded, then a FileError is thrown.
 */
export async function* csvRecords(
  chunks: AsyncIterable<Buffer>,
  options: { delimiter: string; maxRecordBytes: number },
): AsyncGenerator<{ header: string[] } | CsvRecord> {
  const parsed: Parsed[] = [];
  const parser = parse({
    encoding: null,
    // The BOM is dropped below: csv-parse's own BOM handling switches it back to decoding cells itself.
    bom: false,
    delimiter: options.delimiter,
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    skip_empty_lines: true,
    max_record_size: options.maxRecordBytes,
    // Records are taken here, synchronously, so those before a parse error are never lost with the stream.
    // With encoding null the cells are bytes (typed as strings by csv-parse): decoded strictly below.
    on_record: (record: string[], info: InfoRecord) => {
      parsed.push({ cells: record as unknown as Uint8Array[], emptyLines: info.empty_lines });
      return undefined;
    },
  });
  parser.on('error', () => undefined);
  let header: string[] | undefined;
  // Where the next record starts: after the previous record's lines and the empty lines skipped since.
  let nextLine = 1;
  let emptyLines = 0;
  const drain = function* (): Generator<{ header: string[] } | CsvRecord> {
    for (const p of parsed) {
      const line = nextLine + (p.emptyLines - emptyLines);
      nextLine = line + 1 + breaksIn(p.cells);
      emptyLines = p.emptyLines;
      const cells: string[] = [];
      let badUtf8 = false;
      for (const bytes of p.cells) {
        const text = decode(bytes);
        if (text === undefined) badUtf8 = true;
        cells.push(text ?? '');
      }
      if (header === undefined) {
        if (badUtf8) throw new FileError(`line ${line}: the header is not valid UTF-8 (save the file as UTF-8)`);
        header = cells.map((c) => c.trim());
        yield { header };
        continue;
      }
      if (badUtf8) {
        yield { line, error: 'invalid UTF-8' };
        continue;
      }
      if (cells.every((c) => c.trim() === '')) continue;
      yield { line, cells };
    }
    parsed.length = 0;
  };
  let first = true;
  for await (const chunk of chunks) {
    const bom = first && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf;
    first = false;
    // Fed in slices: the records parsed from one slice are all held until drained, so a slice bounds them.
    for (let at = bom ? 3 : 0; at < chunk.length; at += FEED_BYTES) {
      const err = await feed(parser, chunk.subarray(at, at + FEED_BYTES));
      yield* drain();
      if (err) throw new FileError(describe(err, nextLine + (parser.info.empty_lines - emptyLines)));
    }
  }
  const err = await feed(parser, null);
  yield* drain();
  if (err) throw new FileError(describe(err, nextLine + (parser.info.empty_lines - emptyLines)));
}
