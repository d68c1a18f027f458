// The reading side of a POP3 connection (RFC 1939 §3): one status line, or one multi-line answer up to its "." line, each with a byte cap and a deadline;
// whatever the server does, every failure ends as one rejected read, never an unheard 'error' event.
import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';

/** A broken, refused, oversized or late answer; the message is fit for last_poll_error and verify's error. */
export class Pop3WireError extends Error {
  override name = 'Pop3WireError';
  constructor(
    message: string,
    /** The read's deadline passed (the caller knows the time allowed, and says it). */
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** What the server sent without being asked, kept until the next read; more than this ends the session. */
const UNASKED_BYTES = 64 * 1024;

interface Pending {
  kind: 'line' | 'block';
  maxBytes: number;
  resolve(value: Buffer): void;
  reject(err: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * Reads a POP3 server's answers off a socket it owns: listeners for 'data', 'error', 'end' and 'close'
 * stay on the socket for its life, so nothing the server or the network does is unheard. Memory stays
 * within the cap of the read in progress (the socket's chunks are consumed as they come).
 */
export class Pop3Wire {
  private head: Buffer = Buffer.alloc(0);
  private pending: Pending | undefined;
  private failure: Error | undefined;
  // Block mode: the bytes of the answer so far (dot-stuffing undone), and whether the next byte starts a line.
  private readonly block = new BlockBuffer();
  private atLineStart = true;
  private handshaking: boolean;

  constructor(private readonly socket: Socket) {
    this.handshaking = socket instanceof TLSSocket;
    socket.once('secureConnect', () => (this.handshaking = false));
    socket.on('data', (chunk: Buffer) => {
      this.head = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
      this.pump();
    });
    socket.on('error', (err: NodeJS.ErrnoException) =>
      this.fail(new Pop3WireError(`${err.code ? `${err.code} (${err.message})` : err.message}${this.during()}`)),
    );
    socket.on('end', () => this.fail(new Pop3WireError(`the server closed the connection${this.during()}`)));
    socket.on('close', () => this.fail(new Pop3WireError(`the connection was closed${this.during()}`)));
  }

  private during(): string {
    return this.handshaking ? ' during the TLS handshake' : '';
  }

  /** One line (without its CR LF); longer than `maxBytes`, or not within `deadlineMs`: a Pop3WireError. */
  readLine(maxBytes: number, deadlineMs: number): Promise<Buffer> {
    return this.read('line', maxBytes, deadlineMs);
  }

  /**
   * The lines of a multi-line answer up to its terminating "." line, each with its own line break,
   * dot-stuffing undone (RFC 1939 §3); more than `maxBytes` in all, or not within `deadlineMs`: a Pop3WireError.
   */
  readBlock(maxBytes: number, deadlineMs: number): Promise<Buffer> {
    this.block.clear();
    this.atLineStart = true;
    return this.read('block', maxBytes, deadlineMs);
  }

  write(line: string): void {
    if (this.failure === undefined) this.socket.write(`${line}\r\n`);
  }

  /** Ends the connection at once; a read in progress fails. */
  destroy(reason = 'the connection was closed'): void {
    this.fail(new Pop3WireError(reason));
  }

  private read(kind: Pending['kind'], maxBytes: number, deadlineMs: number): Promise<Buffer> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.pending !== undefined) return Promise.reject(new Pop3WireError('a read is already in progress'));
    return new Promise<Buffer>((resolve, reject) => {
      // A whole answer within the deadline, not only some byte now and then: a server dripping one byte a second ends too.
      const timer = setTimeout(() => this.fail(new Pop3WireError('the server did not answer in time', true)), deadlineMs);
      this.pending = { kind, maxBytes, resolve, reject, timer };
      this.pump();
    });
  }

  private settle(value: Buffer | Error): void {
    const pending = this.pending;
    if (pending === undefined) return;
    this.pending = undefined;
    clearTimeout(pending.timer);
    if (value instanceof Error) pending.reject(value);
    else pending.resolve(value);
  }

  private fail(err: Error): void {
    if (this.failure !== undefined) return;
    this.failure = err;
    this.head = Buffer.alloc(0);
    this.block.clear();
    this.socket.destroy();
    this.settle(err);
  }

  private pump(): void {
    if (this.failure !== undefined) return;
    const pending = this.pending;
    if (pending === undefined) {
      if (this.head.length > UNASKED_BYTES) this.fail(new Pop3WireError(`the server sent more than ${UNASKED_BYTES} bytes nobody asked for`));
      return;
    }
    if (pending.kind === 'line') this.pumpLine(pending.maxBytes);
    else this.pumpBlock(pending.maxBytes);
  }

  private pumpLine(maxBytes: number): void {
    const newline = this.head.indexOf(0x0a);
    const length = newline < 0 ? this.head.length : newline;
    if (length > maxBytes) {
      this.fail(new Pop3WireError(`the server sent a line longer than ${maxBytes} bytes`));
      return;
    }
    if (newline < 0) return;
    const line = this.head.subarray(0, newline > 0 && this.head[newline - 1] === 0x0d ? newline - 1 : newline);
    this.head = this.head.subarray(newline + 1);
    this.settle(Buffer.from(line));
  }

  private pumpBlock(maxBytes: number): void {
    const head = this.head;
    let pos = 0;
    for (;;) {
      if (this.atLineStart && head[pos] === 0x2e) {
        // The "." line ends the answer; a line starting with "." had one more put in front (dot-stuffing).
        const rest = head.length - pos;
        if (rest < 2 || (head[pos + 1] === 0x0d && rest < 3)) break;
        if (head[pos + 1] === 0x0a || (head[pos + 1] === 0x0d && head[pos + 2] === 0x0a)) {
          this.head = head.subarray(pos + (head[pos + 1] === 0x0a ? 2 : 3));
          const answer = this.block.take();
          this.settle(answer);
          return;
        }
        pos++;
        this.atLineStart = false;
        continue;
      }
      if (pos >= head.length) break;
      const newline = head.indexOf(0x0a, pos);
      const end = newline < 0 ? head.length : newline + 1;
      if (this.block.length + (end - pos) > maxBytes) {
        this.fail(new Pop3WireError(`the answer is larger than ${maxBytes} bytes`));
        return;
      }
      this.block.append(head, pos, end);
      pos = end;
      this.atLineStart = newline >= 0;
    }
    this.head = head.subarray(pos);
  }
}

/**
 * The bytes of a multi-line answer, copied into one buffer that doubles as it fills: no object per
 * line, so a flood of empty or dot-stuffed lines costs its bytes, not a million small Buffers.
 */
class BlockBuffer {
  private data = Buffer.alloc(0);
  length = 0;

  append(source: Buffer, start: number, end: number): void {
    const needed = this.length + (end - start);
    if (needed > this.data.length) {
      const grown = Buffer.allocUnsafe(Math.max(needed, this.data.length * 2, 4096));
      this.data.copy(grown, 0, 0, this.length);
      this.data = grown;
    }
    source.copy(this.data, this.length, start, end);
    this.length = needed;
  }

  /** The answer (its buffer is handed over, not copied); the next append starts afresh. */
  take(): Buffer {
    const out = this.data.subarray(0, this.length);
    this.clear();
    return out;
  }

  clear(): void {
    this.data = Buffer.alloc(0);
    this.length = 0;
  }
}
