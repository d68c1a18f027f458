// Reads an SMTP DATA stream to its end for the MX and submission servers, keeping the bytes only while they fit the size limit.
import type { SMTPServerDataStream } from 'smtp-server';

export interface DataRead {
  /** The message; empty when it was larger than the limit. */
  bytes: Buffer;
  /** Bytes the client sent. */
  size: number;
  sizeExceeded: boolean;
}

/**
 * The whole message, read to its end (the reply can only follow the final dot). Past `max` the
 * bytes are counted, not kept. Rejects when the client goes away mid-message: nothing has been
 * handed on by then.
 */
export async function readData(stream: SMTPServerDataStream, max: number): Promise<DataRead> {
  let chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= max) chunks.push(chunk);
    else chunks = [];
  }
  const sizeExceeded = stream.sizeExceeded || size > max;
  return { bytes: sizeExceeded ? Buffer.alloc(0) : Buffer.concat(chunks, size), size, sizeExceeded };
}
