// The reading side of a POP3 connection (RFC 1939 §3): one status line, or one multi-line answer up to its "." line, each with a byte cap and a deadline; whatever the server does, every failure ends as one rejected read, never an unheard 'error' event.
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
  private parts: Buffer[] = [];
  private partsBytes = 0;
  private atLineStart = true;
  private handshaking: boolean;

  constructor(private readonly socket: Socket) {
    this.handshaking = socket instanceof TLSSocket;
    socket.once('secureConnect', () => (this.handshaking = false));
    socket.on('data', (chunk: Buffer) => {
      this.head = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
      this.pump();
    });
    socket.on('error', (err: NodeJS.ErrnoException) => this.fail(new Pop3WireError(`${err.code ? `${err.code} (${err.message})` : err.message}${this.during()}`)));
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
    this.parts = [];
    this.partsBytes = 0;
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
    this.parts = [];
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
    for (;;) {
      const head = this.head;
      if (this.atLineStart && head[0] === 0x2e) {
        // The "." line ends the answer; a line starting with "." had one more put in front (dot-stuffing).
        if (head.length < 2 || (head[1] === 0x0d && head.length < 3)) return;
        if (head[1] === 0x0a || (head[1] === 0x0d && head[2] === 0x0a)) {
          this.head = head.subarray(head[1] === 0x0a ? 2 : 3);
          const answer = Buffer.concat(this.parts, this.partsBytes);
          this.parts = [];
          this.settle(answer);
          return;
        }
        this.head = head.subarray(1);
        this.atLineStart = false;
        continue;
      }
      if (this.head.length === 0) return;
      const newline = this.head.indexOf(0x0a);
      const take = newline < 0 ? this.head.length : newline + 1;
      if (this.partsBytes + take > maxBytes) {
        this.fail(new Pop3WireError(`the answer is larger than ${maxBytes} bytes`));
        return;
      }
      this.parts.push(this.head.subarray(0, take));
      this.partsBytes += take;
      this.head = this.head.subarray(take);
      this.atLineStart = newline >= 0;
      if (newline < 0) return;
    }
  }
}
