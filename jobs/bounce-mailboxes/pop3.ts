// A POP3 session (RFC 1939) on node:net / node:tls: log in, list messages with their UIDL and size, fetch one as bytes, delete, quit; every answer capped in
// size and bounded in time.
import { connect as connectPlain, isIP } from 'node:net';
import { checkServerIdentity, connect as connectTls, type PeerCertificate } from 'node:tls';
import { Pop3Error, type MailboxMessage, type MailboxSession } from '../../shared/delivery/bounce-mailboxes/mailbox-session.js';
import { Pop3Wire, Pop3WireError } from './pop3-wire.js';

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
  /** Each step (connect with TLS and greeting, each command with its whole answer) must end within this. */
  timeoutMs: number;
}

/** RFC 1939 §3 gives a status line at most 512 bytes; a little more is tolerated, a 10 MB "line" is not. */
export const MAX_STATUS_LINE_BYTES = 4096;
/** The UIDL and LIST answers (one short line per message): about 150,000 messages. */
export const MAX_LISTING_BYTES = 4 * 1024 * 1024;

/** The server's own words, as one line of printable text of bounded length (it ends up in an API answer). */
function serverText(line: Buffer): string {
  const text = line
    .toString('latin1')
    .replace(/[^\x20-\x7e]+/g, ' ')
    .trim();
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function asPop3Error(step: string, err: unknown, timeoutMs: number): Pop3Error {
  if (err instanceof Pop3Error) return err;
  if (err instanceof Pop3WireError && err.timedOut) return new Pop3Error(`${step}: the server did not answer within ${timeoutMs / 1000} s`);
  return new Pop3Error(`${step}: ${String((err as Error)?.message ?? err)}`);
}

export class Pop3Session implements MailboxSession {
  private constructor(
    private readonly wire: Pop3Wire,
    private readonly timeoutMs: number,
  ) {}

  /** Connects, reads the greeting and logs in (USER/PASS); a refused login, an unreachable or misbehaving server is a Pop3Error. */
  static async open(target: Pop3Target): Promise<Pop3Session> {
    const socket = target.tls
      ? connectTls({
          host: target.address,
          port: target.port,
          // SNI carries a name only (RFC 6066); the certificate must name the host the tenant gave, not the address it resolved to.
          ...(isIP(target.host) === 0 ? { servername: target.host } : {}),
          checkServerIdentity: (_name: string, cert: PeerCertificate) => checkServerIdentity(target.host, cert),
        })
      : connectPlain({ host: target.address, port: target.port });
    // The wire's listeners go on before any event can fire (connect errors come on a later tick).
    const session = new Pop3Session(new Pop3Wire(socket), target.timeoutMs);
    try {
      // The greeting's deadline covers the TCP connect and the TLS handshake before it.
      await session.status('login', Date.now() + target.timeoutMs);
      await session.command('login', `USER ${target.username}`);
      await session.command('login', `PASS ${target.password}`);
    } catch (err) {
      session.abort();
      throw asPop3Error('login', err, target.timeoutMs);
    }
    return session;
  }

  /** Every message in the maildrop with its UIDL and size, in message-number order. */
  async list(): Promise<MailboxMessage[]> {
    const uidls = pairs(await this.multiline('UIDL', 'UIDL', MAX_LISTING_BYTES));
    const sizes = new Map(pairs(await this.multiline('LIST', 'LIST', MAX_LISTING_BYTES)).map(([n, size]) => [Number(n), Number(size)]));
    return uidls
      .map(([n, uidl]) => ({ number: Number(n), uidl: uidl ?? '', size: sizes.get(Number(n)) ?? 0 }))
      .filter((m) => Number.isInteger(m.number) && m.number > 0 && m.uidl !== '');
  }

  /** The message's bytes as stored (dot-stuffing undone); bigger than `limit` bytes is a Pop3Error (and ends the session). */
  async retrieve(number: number, limit: number): Promise<Buffer> {
    return this.multiline('RETR', `RETR ${number}`, limit);
  }

  /** Marks the message deleted; the server removes it when the session ends with QUIT (RFC 1939 §6). */
  async delete(number: number): Promise<void> {
    await this.command('DELE', `DELE ${number}`);
  }

  /** Ends the session: QUIT commits the deletions; if that fails the socket is closed anyway (and nothing is deleted). */
  async quit(): Promise<void> {
    try {
      await this.command('QUIT', 'QUIT');
    } catch {
      // The deletions are lost; the UIDLs are remembered, so the next poll deletes them again.
    } finally {
      this.abort();
    }
  }

  /** Closes without QUIT: nothing is deleted (RFC 1939 §6: the server does not commit DELE without QUIT). */
  abort(): void {
    this.wire.destroy();
  }

  /** Sends one command and reads its status line, all within timeout_ms. */
  private async command(step: string, line: string): Promise<string> {
    const deadline = Date.now() + this.timeoutMs;
    this.wire.write(line);
    return this.status(step, deadline);
  }

  /** A command with a multi-line answer: its status line and its lines, all within one timeout_ms. */
  private async multiline(step: string, line: string, maxBytes: number): Promise<Buffer> {
    const deadline = Date.now() + this.timeoutMs;
    this.wire.write(line);
    await this.status(step, deadline);
    try {
      return await this.wire.readBlock(maxBytes, remaining(deadline));
    } catch (err) {
      throw asPop3Error(step, err, this.timeoutMs);
    }
  }

  /** Reads a status line: "+OK ..." is its text, "-ERR ..." a refusal, anything else the end of the session. */
  private async status(step: string, deadline: number): Promise<string> {
    let line: Buffer;
    try {
      line = await this.wire.readLine(MAX_STATUS_LINE_BYTES, remaining(deadline));
    } catch (err) {
      throw asPop3Error(step, err, this.timeoutMs);
    }
    const text = serverText(line);
    if (/^\+OK\b/i.test(text)) return text.slice(3).trim();
    if (text.startsWith('-')) throw new Pop3Error(`${step}: the server refused: ${text.replace(/^-ERR\b\s*/i, '') || '(no reason given)'}`);
    this.wire.destroy();
    throw new Pop3Error(`${step}: the server's answer is not POP3 (it must start with +OK or -ERR): ${JSON.stringify(text.slice(0, 60))}`);
  }
}

const remaining = (deadline: number) => Math.max(1, deadline - Date.now());

/** The "number value" lines of a UIDL or LIST answer. */
const pairs = (block: Buffer): string[][] =>
  block
    .toString('latin1')
    .split(/\r?\n/)
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields.length >= 2);
