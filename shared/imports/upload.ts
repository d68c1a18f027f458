// Reads an uploaded request body as it arrives, in pieces, with a size cap, an overall deadline and an idle deadline: a file is never held whole.
import type { Readable } from 'node:stream';
import { AppError } from '../errors.js';

export interface UploadLimits {
  maxBytes: number;
  timeoutMs: number;
  idleTimeoutMs: number;
}

/** Why an upload did not arrive in full, as the import records it; `answer` is what the client is told (if still there). */
export class UploadFailure extends Error {
  override name = 'UploadFailure';
  constructor(
    message: string,
    readonly answer: AppError,
  ) {
    super(message);
  }
}

/**
 * Yields the body's pieces. Throws UploadFailure when it grows past maxBytes (413), stalls longer than idleTimeoutMs
 * or takes longer than timeoutMs (408), or the client goes away mid-way; the body is destroyed then.
 */
export async function* uploadPieces(body: Readable, limits: UploadLimits): AsyncGenerator<Buffer> {
  let bytes = 0;
  let timedOut: string | undefined;
  const stop = (why: string) => {
    timedOut = why;
    body.destroy(new Error(why));
  };
  const overall = setTimeout(() => stop(`the upload took longer than ${limits.timeoutMs / 1000} s`), limits.timeoutMs);
  const idle = setTimeout(() => stop(`the upload stalled for ${limits.idleTimeoutMs / 1000} s`), limits.idleTimeoutMs);
  try {
    for await (const piece of body as AsyncIterable<Buffer | string>) {
      const buf = typeof piece === 'string' ? Buffer.from(piece) : piece;
      idle.refresh();
      bytes += buf.length;
      if (bytes > limits.maxBytes) {
        const message = `the file is larger than ${limits.maxBytes} bytes (imports.max_file_bytes)`;
        body.destroy();
        throw new UploadFailure(message, new AppError('payload_too_large', message));
      }
      yield buf;
    }
  } catch (err) {
    if (err instanceof UploadFailure) throw err;
    if (timedOut) throw new UploadFailure(timedOut, new AppError('request_timeout', timedOut));
    throw new UploadFailure(`the upload was interrupted after ${bytes} bytes`, new AppError('bad_request', 'the upload was interrupted'));
  } finally {
    clearTimeout(overall);
    clearTimeout(idle);
  }
}

/** Gathers pieces into fixed-size chunks (the last one shorter): what is stored, one row each. */
export async function* fixedChunks(pieces: AsyncIterable<Buffer>, size: number): AsyncGenerator<Buffer> {
  let chunk = Buffer.allocUnsafe(size);
  let used = 0;
  for await (const piece of pieces) {
    let offset = 0;
    while (offset < piece.length) {
      const n = Math.min(size - used, piece.length - offset);
      piece.copy(chunk, used, offset, offset + n);
      used += n;
      offset += n;
      if (used === size) {
        yield chunk;
        chunk = Buffer.allocUnsafe(size);
        used = 0;
      }
    }
  }
  if (used > 0) yield chunk.subarray(0, used);
}
