// A POP3 session (RFC 1939) over node-pop3: log in, list messages with their UIDL and size, fetch one as bytes, delete, quit.
import { checkServerIdentity, type PeerCertificate, type TlsOptions } from 'node:tls';
import Pop3Command from 'node-pop3';

export interface Pop3Target {
  /** The host as the tenant named it: what a TLS certificate is checked against. */
  host: string;
  /** The address the host was resolved and checked to (the connection goes there, never re-resolved). */
  address: string;
  port: number;
  /** TLS from the first byte (POP3S, usually port 995); false: plain POP3 (usually port 110). */
  tls: boolean;
  username: string;
  password: string;
  timeoutMs: number;
}

export interface Pop3Message {
  /** The message number in this session (1-based). */
  number: number;
  /** The server's unique id of the message, stable across sessions (RFC 1939 UIDL). */
  uidl: string;
  size: number;
}

/** A refusal or failure of the POP3 server or the connection, with a message fit for last_poll_error and verify's error. */
export class Pop3Error extends Error {
  override name = 'Pop3Error';
}

/** What node-pop3 rejects with: an Error whose message is the server's text, or a connection event. */
function describe(err: unknown, step: string): Pop3Error {
  const e = err as Error & { eventName?: string; code?: string; command?: string };
  if (e?.eventName === 'timeout') return new Pop3Error(`${step}: the server did not answer in time`);
  if (e?.code) return new Pop3Error(`${step}: ${e.code}${e.message ? ` (${e.message})` : ''}`);
  if (e?.eventName === 'close' || e?.eventName === 'end') return new Pop3Error(`${step}: the server closed the connection`);
  const text = String(e?.message ?? err).trim();
  return new Pop3Error(`${step}: ${text === '' ? 'refused' : text}`);
}

/** RFC 1939 §3: a line of a multi-line answer that starts with "." had one more "." put in front. */
export function unstuffDots(raw: Buffer): Buffer {
  if (raw.indexOf('\n..') < 0 && !(raw[0] === 0x2e && raw[1] === 0x2e)) return raw;
  const parts: Buffer[] = [];
  let start = 0;
  let lineStart = 0;
  while (lineStart < raw.length) {
    if (raw[lineStart] === 0x2e && raw[lineStart + 1] === 0x2e) {
      parts.push(raw.subarray(start, lineStart));
      start = lineStart + 1;
    }
    const newline = raw.indexOf(0x0a, lineStart);
    if (newline < 0) break;
    lineStart = newline + 1;
  }
  parts.push(raw.subarray(start));
  return Buffer.concat(parts);
}

function readAll(stream: NodeJS.ReadableStream, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) chunks.push(chunk);
    });
    stream.on('error', reject);
    stream.on('end', () => (size > limit ? reject(new Pop3Error(`the message is larger than ${limit} bytes`)) : resolve(Buffer.concat(chunks))));
  });
}

const CRLF = Buffer.from('\r\n');

const pairs = (answer: string[][] | string[]): string[][] => (answer as unknown[]).filter(Array.isArray) as string[][];

export class Pop3Session {
  private constructor(private readonly client: Pop3Command) {}

  /** Connects and logs in (USER/PASS); a refused login or an unreachable server is a Pop3Error. */
  static async open(target: Pop3Target): Promise<Pop3Session> {
    const client = new Pop3Command({
      host: target.address,
      port: target.port,
      tls: target.tls,
      timeout: target.timeoutMs,
      user: target.username,
      password: target.password,
      servername: target.host,
      // The certificate must name the host the tenant gave, not the address it resolved to.
      // (node-pop3 spreads tlsOptions into tls.connect's options, where checkServerIdentity belongs.)
      tlsOptions: { checkServerIdentity: (_name: string, cert: PeerCertificate) => checkServerIdentity(target.host, cert) } as TlsOptions,
    });
    try {
      await client._connect();
    } catch (err) {
      client._socket?.destroy();
      throw describe(err, 'login');
    }
    return new Pop3Session(client);
  }

  /** Every message in the maildrop with its UIDL and size, in message-number order. */
  async list(): Promise<Pop3Message[]> {
    try {
      const uidls = pairs(await this.client.UIDL());
      const sizes = new Map(pairs(await this.client.LIST()).map(([n, size]) => [Number(n), Number(size)]));
      return uidls
        .map(([n, uidl]) => ({ number: Number(n), uidl: uidl ?? '', size: sizes.get(Number(n)) ?? 0 }))
        .filter((m) => Number.isInteger(m.number) && m.number > 0 && m.uidl !== '');
    } catch (err) {
      throw describe(err, 'UIDL');
    }
  }

  /** The message's bytes as stored (dot-stuffing undone); bigger than `limit` bytes is a Pop3Error. */
  async retrieve(number: number, limit: number): Promise<Buffer> {
    try {
      const [, stream] = await this.client.command('RETR', number);
      if (!stream) throw new Pop3Error('RETR: the server sent no message');
      const data = await readAll(stream, limit);
      // The terminator CRLF.CRLF begins with the last line's own CRLF (RFC 1939 §3), which node-pop3 cuts off
      // with the rest of it when the terminator arrives in one piece (and keeps when it arrives split).
      const whole = data.length > 0 && !data.subarray(-2).equals(CRLF) ? Buffer.concat([data, CRLF]) : data;
      return unstuffDots(whole);
    } catch (err) {
      throw err instanceof Pop3Error ? err : describe(err, 'RETR');
    }
  }

  /** Marks the message deleted; the server removes it when the session ends with QUIT (RFC 1939 §6). */
  async delete(number: number): Promise<void> {
    try {
      await this.client.DELE(number);
    } catch (err) {
      throw describe(err, 'DELE');
    }
  }

  /** Ends the session: QUIT commits the deletions; if that fails the socket is closed anyway (and nothing is deleted). */
  async quit(): Promise<void> {
    try {
      await this.client.QUIT();
    } catch {
      // The deletions are lost; the UIDLs are remembered, so the next poll deletes them again.
    } finally {
      this.client._socket?.destroy();
    }
  }

  /** Closes without QUIT: nothing is deleted (RFC 1939 §6: the server does not commit DELE without QUIT). */
  abort(): void {
    this.client._socket?.destroy();
  }
}
