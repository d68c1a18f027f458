// Reused SMTP connections per destination (address:port, and the local source address when one is bound): one nodemailer pool each, made on demand, closed
// once idle; sending turns nodemailer's answer into an SmtpOutcome.
import { Readable } from 'node:stream';
import SMTPPool from 'nodemailer/lib/smtp-pool';
import type { Config } from '../../../shared/config/index.js';
import type { Logger } from '../../../shared/kernel/log.js';
import type { SmtpOutcome } from '../../../shared/delivery/classify.js';

/** One place to connect to: the address (or a name left to the system resolver), and the host name it stands for. */
export interface Destination {
  /** The MX or relay host name, sent as the TLS server name (SNI); may equal `address`. */
  host: string;
  address: string;
  port: number;
  /** The local address to connect from (a member of the send's IP pool); undefined: the system picks. */
  localAddress?: string;
}

export interface Envelope {
  from: string;
  to: string;
}

export interface SendOutcome {
  outcome: SmtpOutcome;
  /**
   * No reply to the mail transaction itself (no connection, no greeting, refused EHLO, a dropped
   * or stalled session): another MX host may do better.
   */
  connectionLevel: boolean;
}

interface Pooled {
  mailer: SMTPPool;
  pending: number;
  idleTimer: NodeJS.Timeout | undefined;
}

interface NodemailerError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
  command?: string;
}

// Replies to these commands come before any transaction: the host, not the message, is the problem.
const SESSION_COMMANDS = new Set(['CONN', 'EHLO', 'HELO', 'LHLO', 'STARTTLS']);

/** The SMTP answer (or its absence) in an error nodemailer gave for a send. */
function outcomeOfError(err: NodemailerError): SendOutcome {
  const response = typeof err.response === 'string' ? err.response.trim() : '';
  if (typeof err.responseCode === 'number' && response !== '') {
    return { outcome: { kind: 'reply', code: err.responseCode, text: response }, connectionLevel: SESSION_COMMANDS.has(err.command ?? '') };
  }
  return { outcome: { kind: 'network', text: `${err.code ?? 'ERROR'}: ${err.message}` }, connectionLevel: true };
}

export class Transports {
  private readonly pools = new Map<string, Pooled>();
  private closed = false;

  constructor(
    private readonly config: Pick<Config, 'delivery' | 'hostname'>,
    private readonly log: Logger,
  ) {}

  /** Sends `raw` to one recipient through the destination's pool. Never throws: failures are outcomes. */
  async send(dest: Destination, envelope: Envelope, raw: Buffer, signal: AbortSignal): Promise<SendOutcome> {
    if (this.closed) return { outcome: { kind: 'network', text: 'the delivery worker is stopping' }, connectionLevel: false };
    const pooled = this.poolFor(dest);
    pooled.pending++;
    clearTimeout(pooled.idleTimer);
    try {
      const info = await sendRaw(pooled.mailer, envelope, raw, signal);
      const text = String(info.response ?? '250 OK').trim();
      return { outcome: { kind: 'reply', code: Number(/^\d{3}/.exec(text)?.[0] ?? 250), text }, connectionLevel: false };
    } catch (err) {
      if (signal.aborted)
        return {
          outcome: { kind: 'network', text: `gave up waiting for ${dest.host}: ${String(signal.reason ?? 'deadline passed')}` },
          connectionLevel: false,
        };
      return outcomeOfError(err as NodemailerError);
    } finally {
      pooled.pending--;
      if (pooled.pending === 0) this.closeWhenIdle(keyOf(dest), pooled);
    }
  }

  /** Open pools (for tests and the admin view). */
  size(): number {
    return this.pools.size;
  }

  /** Closes every pool; a delivery still running finishes first (nodemailer's pool close lets it). */
  async close(): Promise<void> {
    this.closed = true;
    for (const [key, pooled] of this.pools) {
      clearTimeout(pooled.idleTimer);
      pooled.mailer.close();
      this.pools.delete(key);
    }
  }

  private poolFor(dest: Destination): Pooled {
    const key = keyOf(dest);
    let pooled = this.pools.get(key);
    if (pooled) return pooled;
    const d = this.config.delivery;
    const mailer = new SMTPPool({
      pool: true,
      host: dest.address,
      port: dest.port,
      ...(dest.localAddress !== undefined ? { localAddress: dest.localAddress } : {}),
      name: this.config.hostname,
      maxConnections: d.destination.max_connections,
      maxMessages: d.destination.max_messages_per_connection,
      idleTimeout: d.destination.idle_close_ms,
      // One more try on a fresh connection covers a reused one the server closed meanwhile; more
      // would only hide a failing host from the MX fallback and the retry curve.
      maxRequeues: 1,
      secure: false,
      // Opportunistic STARTTLS as MTAs do it: used when offered, never required, and the
      // certificate is not checked (MX certificates rarely match; refusing would only force plaintext).
      opportunisticTLS: true,
      tls: { rejectUnauthorized: false, ...(dest.host !== dest.address ? { servername: dest.host } : {}) },
      connectionTimeout: d.timeouts.connect_ms,
      greetingTimeout: d.timeouts.greeting_ms,
      socketTimeout: d.timeouts.socket_ms,
      logger: false,
    });
    // A pool error without a message in flight has nobody to tell but the log; unheard it would crash the process.
    mailer.on('error', (err: Error) => this.log.warn({ err, destination: key }, 'SMTP pool error'));
    pooled = { mailer, pending: 0, idleTimer: undefined };
    this.pools.set(key, pooled);
    return pooled;
  }

  private closeWhenIdle(key: string, pooled: Pooled): void {
    pooled.idleTimer = setTimeout(() => {
      if (pooled.pending > 0 || this.pools.get(key) !== pooled) return;
      this.pools.delete(key);
      pooled.mailer.close();
    }, this.config.delivery.destination.idle_close_ms);
    pooled.idleTimer.unref();
  }
}

/**
 * The message as nodemailer's pool reads it (the pool's transport interface, what Mail.sendMail hands it): the
 * envelope, and the stored bytes as one stream. Mail.sendMail would first wrap the bytes in a MailMessage, compile
 * them into a MIME tree and stream them through a pipeline, costing more than the SMTP transaction itself; what
 * reaches the wire is the same: the bytes, ending in a line break (as nodemailer's LastNewline makes sure).
 */
function sendRaw(pool: SMTPPool, envelope: Envelope, raw: Buffer, signal: AbortSignal): Promise<{ response?: string }> {
  const last = raw[raw.length - 1];
  const bytes = last === 0x0a ? raw : Buffer.concat([raw, Buffer.from(last === 0x0d ? '\n' : '\r\n')]);
  const message = {
    getEnvelope: () => ({ from: envelope.from, to: [envelope.to] }),
    messageId: () => '',
    getHeader: () => '',
    // A new stream per try: the pool sends a message again on a fresh connection when a reused one was closed
    // before any of it was read (readableDidRead tells).
    createReadStream: () =>
      new Readable({
        read() {
          this.push(bytes);
          this.push(null);
        },
      }),
  };
  return new Promise((resolve, reject) => {
    pool.send({ data: { signal }, message } as never, (err: Error | null, info?: unknown) =>
      err ? reject(err) : resolve((info ?? {}) as { response?: string }),
    );
  });
}

const keyOf = (dest: Destination) =>
  `${dest.address.includes(':') ? `[${dest.address}]` : dest.address}:${dest.port}${dest.localAddress !== undefined ? ` from ${dest.localAddress}` : ''}`;
