// A raw SMTP client for tests that need to misbehave (skip AUTH, drop mid-DATA): one command, one reply, on 127.0.0.1 only.
import { connect as netConnect, type Socket } from 'node:net';
import { connect as tlsConnect, type TLSSocket } from 'node:tls';

export interface SmtpReply {
  code: number;
  /** The reply's lines without the code, joined by newlines. */
  text: string;
}

const REPLY_TIMEOUT_MS = 10_000;

export class RawSmtpClient {
  private buffer = '';
  private waiting: { resolve(reply: SmtpReply): void; reject(err: Error): void } | undefined;
  private closedWith: Error | undefined;

  private constructor(private socket: Socket | TLSSocket) {
    this.attach(socket);
  }

  /** Connects (implicit TLS when `tls`) and reads the greeting. */
  static async open(port: number, options: { tls?: boolean } = {}): Promise<{ client: RawSmtpClient; greeting: SmtpReply }> {
    const socket = await new Promise<Socket | TLSSocket>((resolve, reject) => {
      const s = options.tls
        ? tlsConnect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => resolve(s))
        : netConnect({ host: '127.0.0.1', port }, () => resolve(s));
      s.once('error', reject);
    });
    const client = new RawSmtpClient(socket);
    return { client, greeting: await client.read() };
  }

  /** Sends one command line and waits for its reply. */
  async command(line: string): Promise<SmtpReply> {
    this.socket.write(`${line}\r\n`);
    return this.read();
  }

  /** Writes bytes as they are (a DATA body, a half message). */
  write(data: string | Buffer): void {
    this.socket.write(data);
  }

  /** Writes bytes and waits until the socket takes more (large bodies without buffering them all); rejects if the connection closes. */
  async send(data: string | Buffer): Promise<void> {
    if (this.closedWith) throw this.closedWith;
    if (this.socket.write(data)) return;
    await new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        this.socket.off('drain', drained);
        this.socket.off('close', closed);
        if (err) reject(err);
        else resolve();
      };
      const drained = () => done();
      const closed = () => done(this.closedWith ?? new Error('connection closed'));
      this.socket.once('drain', drained);
      this.socket.once('close', closed);
    });
  }

  /** STARTTLS, then the TLS handshake on the same connection. */
  async startTls(): Promise<SmtpReply> {
    const reply = await this.command('STARTTLS');
    if (reply.code !== 220) return reply;
    const plain = this.socket;
    plain.removeAllListeners('data');
    this.socket = await new Promise<TLSSocket>((resolve, reject) => {
      const s = tlsConnect({ socket: plain, rejectUnauthorized: false }, () => resolve(s));
      s.once('error', reject);
    });
    this.attach(this.socket);
    return reply;
  }

  /** AUTH PLAIN with any user and the key as the password. */
  auth(key: string, user = 'apikey'): Promise<SmtpReply> {
    return this.command(`AUTH PLAIN ${Buffer.from(`\0${user}\0${key}`).toString('base64')}`);
  }

  /** Drops the connection without QUIT. */
  destroy(): void {
    this.socket.destroy();
  }

  async quit(): Promise<void> {
    await this.command('QUIT').catch(() => undefined);
    this.socket.destroy();
  }

  read(): Promise<SmtpReply> {
    const ready = this.take();
    if (ready) return Promise.resolve(ready);
    if (this.closedWith) return Promise.reject(this.closedWith);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting = undefined;
        reject(new Error(`no SMTP reply within ${REPLY_TIMEOUT_MS} ms`));
      }, REPLY_TIMEOUT_MS);
      this.waiting = {
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
    });
  }

  private attach(socket: Socket | TLSSocket): void {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      this.buffer += chunk;
      const reply = this.waiting && this.take();
      if (reply && this.waiting) {
        const waiting = this.waiting;
        this.waiting = undefined;
        waiting.resolve(reply);
      }
    });
    const fail = (err: Error) => {
      this.closedWith ??= err;
      const waiting = this.waiting;
      this.waiting = undefined;
      waiting?.reject(this.closedWith);
    };
    socket.on('error', fail);
    socket.on('close', () => fail(new Error('connection closed')));
  }

  /** One complete reply off the buffer: lines "NNN-..." then a last "NNN ...". */
  private take(): SmtpReply | undefined {
    const lines: string[] = [];
    let offset = 0;
    for (let i = 0; i < 1000; i++) {
      const end = this.buffer.indexOf('\r\n', offset);
      if (end < 0) return undefined;
      const line = this.buffer.slice(offset, end);
      offset = end + 2;
      lines.push(line.slice(4));
      if (line[3] !== '-') {
        this.buffer = this.buffer.slice(offset);
        return { code: Number(line.slice(0, 3)), text: lines.join('\n') };
      }
    }
    return undefined;
  }
}
