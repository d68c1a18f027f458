// Splits a byte stream into lines (LF, the CR of a CRLF left to the caller) in bounded memory: an over-long line is reported, not held.

/** The lines of a byte stream (LF or CRLF), each at most maxBytes: a longer line comes back as `tooLong` without its bytes. */
export async function* lines(
  chunks: AsyncIterable<Buffer>,
  maxBytes: number,
): AsyncGenerator<{ line: number; bytes: Buffer } | { line: number; tooLong: true }> {
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
