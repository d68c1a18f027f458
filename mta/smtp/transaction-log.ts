// The mail log of the MX and submission: one 'smtp transaction' line per transaction, one 'smtp auth failed' per refused AUTH, one 'smtp connection without
// transaction' per session that had none (fields in docs/operating.md, "The mail and request log").
import type { TLSSocket } from 'node:tls';
import type { SMTPServerSession } from 'smtp-server';
import type { Logger } from '../../shared/kernel/log.js';

/** A reply as the client got it: the code and the text (enhanced code first). */
export interface Reply {
  code: number;
  text: string;
}

export type TlsFacts = { protocol: string | null; cipher: string } | false;

/** What the stored message is known by: the inbound message id (MX) or the sends made of it (submission). */
export type Stored = { inbound_id: string } | { send_ids: string[]; message_id: string };

interface OpenTransaction {
  from: string;
  rcpt: string[];
  rejected: { rcpt: string; code: number; reply: string }[];
}

/**
 * A session's part of the mail log. The handlers tell it what happened (MAIL, RCPT, DATA and
 * their replies, AUTH, STARTTLS); it writes a line when a transaction ends: at the DATA reply, at a
 * refused MAIL, or, for one abandoned before DATA (RSET, a new MAIL, QUIT, a dropped connection),
 * when the next MAIL comes or the session closes. Only facts, never a password or an API key.
 */
export class SessionLog {
  private tls: TlsFacts = false;
  private keyId: string | null = null;
  private transactions = 0;
  private authFailures = 0;
  private current: OpenTransaction | undefined;
  /** Between the start of DATA and its reply: a close meanwhile leaves the line to the reply. */
  private inData = false;
  /** The last refusal outside a transaction (connect, HELO, AUTH): what a session without one ended on. */
  private lastRefusal: Reply | undefined;

  /** `submission` adds the authenticated key id to every line. */
  constructor(
    private readonly log: Logger,
    private readonly session: SMTPServerSession,
    private readonly submission = false,
  ) {}

  /** TLS is up (STARTTLS, or implicit TLS before the greeting): the session starts over, nothing from before it carries on. */
  secured(socket: TLSSocket): void {
    this.abandon();
    this.keyId = null;
    const cipher = socket.getCipher?.();
    this.tls = { protocol: socket.getProtocol?.() ?? null, cipher: cipher?.name ?? 'unknown' };
  }

  /** A refusal outside a transaction (connect, HELO). */
  refused(reply: Reply): void {
    this.lastRefusal = reply;
  }

  authenticated(keyId: string): void {
    this.keyId = keyId;
  }

  /** A refused AUTH: logged at once, with the key's public prefix at most. */
  authFailed(reply: Reply, method: string, keyPrefix: string | null): void {
    this.authFailures++;
    this.lastRefusal = reply;
    this.log.info({ ...this.sessionFields(), method, key_prefix: keyPrefix, code: reply.code, reply: reply.text }, 'smtp auth failed');
  }

  /** MAIL FROM and its reply: a refused MAIL is a transaction refused at its first step. */
  mail(from: string, reply: Reply): void {
    this.abandon();
    if (reply.code < 400) {
      this.current = { from, rcpt: [], rejected: [] };
      return;
    }
    this.write({ from, rcpt: [], rejected: [] }, 'mail', reply, null);
  }

  rcpt(address: string, reply: Reply): void {
    const t = this.current;
    if (!t) return;
    if (reply.code >= 400) {
      t.rejected.push({ rcpt: address, code: reply.code, reply: reply.text });
      return;
    }
    // A repeated address is one recipient (as the servers keep it).
    if (!t.rcpt.some((r) => r.toLowerCase() === address.toLowerCase())) t.rcpt.push(address);
  }

  /** DATA began: the transaction ends with its reply, even one given after the client left. */
  dataStarted(): void {
    this.inData = true;
  }

  /** The reply to the end of DATA: the transaction's last word. `size` is what the client sent, when it was read. */
  data(reply: Reply, size: number | null, stored?: Stored): void {
    const t = this.current ?? { from: '', rcpt: [], rejected: [] };
    this.current = undefined;
    this.inData = false;
    this.write(t, 'data', reply, size, stored);
  }

  /** The session is over: a transaction still open was abandoned; a session without any says so. */
  closed(): void {
    if (this.inData) return;
    this.abandon();
    if (this.transactions > 0) return;
    const last = this.lastRefusal;
    this.log.info(
      { ...this.sessionFields(), auth_failures: this.authFailures, code: last?.code ?? null, reply: last?.text ?? null },
      'smtp connection without transaction',
    );
  }

  /** Ends an open transaction that never reached DATA: refused when every recipient was refused, else abandoned. */
  private abandon(): void {
    const t = this.current;
    if (!t) return;
    this.current = undefined;
    const last = t.rejected.at(-1);
    const refusedAll = t.rcpt.length === 0 && last !== undefined;
    this.write(t, 'rcpt', refusedAll ? { code: last.code, text: last.reply } : null, null);
  }

  private write(t: OpenTransaction, stage: 'mail' | 'rcpt' | 'data', reply: Reply | null, size: number | null, stored?: Stored): void {
    this.transactions++;
    const outcome = reply === null ? 'abandoned' : reply.code < 400 ? 'accepted' : 'refused';
    this.log.info(
      {
        ...this.sessionFields(),
        from: t.from,
        rcpt: t.rcpt,
        rejected: t.rejected,
        size,
        stage,
        outcome,
        code: reply?.code ?? null,
        reply: reply?.text ?? null,
        ...stored,
      },
      'smtp transaction',
    );
  }

  private sessionFields(): Record<string, unknown> {
    return {
      session: this.session.id,
      client: this.session.remoteAddress,
      helo: this.session.hostNameAppearsAs || null,
      tls: this.tls,
      ...(this.submission ? { key_id: this.keyId } : {}),
    };
  }
}

/**
 * A handler's callback that first tells `observe` the reply it carries: an error's code (the
 * library's default when it has none, 550 for MAIL and RCPT, 450 for DATA) and text, else 250.
 */
export function observed(
  callback: (err?: Error | null, message?: string) => void,
  observe: (reply: Reply) => void,
  defaultErrorCode = 550,
): (err?: Error | null, message?: string) => void {
  return (err, message) => {
    observe(err ? { code: (err as { responseCode?: number }).responseCode ?? defaultErrorCode, text: err.message } : { code: 250, text: message ?? 'OK' });
    callback(err, message);
  };
}
