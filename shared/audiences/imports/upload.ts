// Reads an uploaded request body as it arrives, in pieces, with a size cap, an overall deadline and an idle deadline: a file is never held whole.
import type { Readable } from 'node:stream';
import { AppError } from '../../kernel/errors.js';

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
 * or takes longer than timeoutMs (408), or the client goes away mid-way. The body is not destroyed (that would close
 * the connection before the answer): the caller answers with Connection: close.
 */
export async function* uploadPieces(body: Readable, limits: UploadLimits): AsyncGenerator<Buffer> {
  let bytes = 0;
  const started = Date.now();
  const iterator = (body as AsyncIterable<Buffer | string>)[Symbol.asyncIterator]();
  for (;;) {
    const left = limits.timeoutMs - (Date.now() - started);
    const wait = Math.min(limits.idleTimeoutMs, Math.max(0, left));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), wait)));
    const next = iterator.next();
    let step: IteratorResult<Buffer | string> | 'late';
    try {
      step = await Promise.race([next, late]);
    } catch {
      throw new UploadFailure(`the upload was interrupted after ${bytes} bytes`, new AppError('bad_request', 'the upload was interrupted'));
    } finally {
      clearTimeout(timer);
    }
    if (step === 'late') {
      // The read still pending fails when the connection closes: nothing waits for it any more.
      next.catch(() => undefined);
      const why =
        left <= limits.idleTimeoutMs ? `the upload took longer than ${limits.timeoutMs / 1000} s` : `the upload stalled for ${limits.idleTimeoutMs / 1000} s`;
      throw new UploadFailure(why, new AppError('request_timeout', why));
    }
    if (step.done) return;
    const buf = typeof step.value === 'string' ? Buffer.from(step.value) : step.value;
    bytes += buf.length;
    if (bytes > limits.maxBytes) {
      const message = `the file is larger than ${limits.maxBytes} bytes (imports.max_file_bytes)`;
      throw new UploadFailure(message, new AppError('payload_too_large', message));
    }
    yield buf;
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
