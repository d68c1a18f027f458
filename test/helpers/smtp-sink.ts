// A real SMTP server on 127.0.0.1 for delivery tests: records envelopes, raw messages and the client's address, answers as scripted (per recipient or per
// call), optionally offers STARTTLS, and counts connections.
import type { Socket } from 'node:net';
import { generate } from 'selfsigned';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/**
 * One scripted answer, given at RCPT TO unless `at: 'data'` (then RCPT is accepted and the
 * answer comes after the message). `code` 250 accepts; 4xx / 5xx refuse with `text` (put the
 * enhanced code there: "5.1.1 User unknown"). `stall` never answers; `drop` closes the connection.
 */
export type SinkAnswer = ({ code: number; text?: string } | { stall: true } | { drop: true }) & { at?: 'rcpt' | 'data' };

export interface SinkMessage {
  from: string;
  to: string[];
  raw: Buffer;
  /** Whether the session was encrypted (STARTTLS) when the message arrived. */
  secure: boolean;
  /** The ordinal (1-based) of the connection the message came over. */
  connection: number;
  /** The client's address: the source address the delivery connected from. */
  remoteAddress: string;
}

export interface SmtpSink {
  host: '127.0.0.1';
  port: number;
  /** "127.0.0.1:<port>", for MAILPATH_OUTBOUND_RELAY. */
  address: string;
  messages: SinkMessage[];
  /** Every RCPT TO seen, with the answer's code (or 'stall' / 'drop') and the client's address. */
  rcpts: { to: string; answer: number | 'stall' | 'drop'; remoteAddress: string }[];
  /** Answers for successive RCPTs to this address; 250 once they are used up. */
  answerFor(rcpt: string, ...answers: SinkAnswer[]): void;
  /** Answers for the next RCPTs to any address without a script of its own. */
  answerNext(...answers: SinkAnswer[]): void;
  /** The next `n` connections get no greeting (the client's greeting timeout fires). */
  holdGreetings(n: number): void;
  /** The next `n` connections are closed before the greeting. */
  dropConnections(n: number): void;
  /** The next connections, one per answer, are refused at the greeting with that code and text (then closed). */
  refuseGreetings(...answers: { code: number; text: string }[]): void;
  /** Connections opened so far, open now, and the most open at once. */
  stats(): { opened: number; open: number; maxOpen: number };
  /** Resolves with the messages once there are at least `n`; rejects after `timeoutMs`. */
  waitForMessages(n: number, timeoutMs?: number): Promise<SinkMessage[]>;
  /** Forgets messages, scripts and counts (not open connections). */
  reset(): void;
  stop(): Promise<void>;
}

const ACCEPT: SinkAnswer = { code: 250 };

/** Polls `probe` until it gives a value (anything but undefined); throws after `timeoutMs`. Delivery tests wait with this, never with a blind sleep. */
export async function pollUntil<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
let certificate: Promise<{ cert: string; private: string }> | undefined;

function refusal(code: number, text: string): Error & { responseCode: number } {
  return Object.assign(new Error(text), { responseCode: code });
}

function answerCode(a: SinkAnswer): number | 'stall' | 'drop' {
  return 'stall' in a ? 'stall' : 'drop' in a ? 'drop' : a.code;
}

export async function startSmtpSink(t: { teardown(fn: () => unknown): void }, options: { tls?: boolean } = {}): Promise<SmtpSink> {
  const perRcpt = new Map<string, SinkAnswer[]>();
  let perCall: SinkAnswer[] = [];
  let holds = 0;
  let drops = 0;
  let greetingRefusals: { code: number; text: string }[] = [];
  let opened = 0;
  let maxOpen = 0;
  // Per client port; after STARTTLS the TLS socket joins the plain one, whose own events then stop.
  const sockets = new Map<number, { all: Socket[]; ordinal: number }>();
  const destroy = (port: number) => sockets.get(port)?.all.forEach((s) => s.destroy());
  // The answer due after DATA, per session.
  const atData = new Map<string, SinkAnswer>();
  const tls = options.tls
    ? await (certificate ??= generate([{ name: 'commonName', value: 'sink.mailpath.test' }], { keySize: 2048, algorithm: 'sha256' }))
    : undefined;

  const sink = {} as SmtpSink;
  const apply = (answer: SinkAnswer, session: SMTPServerSession, callback: (err?: Error | null) => void): void => {
    if ('stall' in answer) return;
    if ('drop' in answer) {
      destroy(session.remotePort);
      return;
    }
    if (answer.code >= 200 && answer.code < 300) callback();
    else callback(refusal(answer.code, answer.text ?? (answer.code >= 500 ? '5.0.0 Refused' : '4.0.0 Try again later')));
  };

  const server = new SMTPServer({
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    hideSTARTTLS: !tls,
    ...(tls ? { key: tls.private, cert: tls.cert } : {}),
    size: 50 * 1024 * 1024,
    onConnect(session, callback) {
      if (drops > 0) {
        drops--;
        destroy(session.remotePort);
        return;
      }
      if (holds > 0) {
        holds--;
        return;
      }
      const refused = greetingRefusals.shift();
      if (refused) {
        callback(refusal(refused.code, refused.text));
        return;
      }
      callback();
    },
    onSecure(socket, session, callback) {
      const entry = sockets.get(session.remotePort);
      if (entry) {
        entry.all.push(socket as Socket);
        socket.once('close', () => sockets.delete(session.remotePort));
      }
      callback();
    },
    onRcptTo(address, session, callback) {
      const to = address.address.toLowerCase();
      const answer = perRcpt.get(to)?.shift() ?? perCall.shift() ?? ACCEPT;
      sink.rcpts.push({ to, answer: answerCode(answer), remoteAddress: session.remoteAddress });
      if (answer.at === 'data') {
        atData.set(session.id, answer);
        callback();
        return;
      }
      apply(answer, session, callback);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const answer = atData.get(session.id) ?? ACCEPT;
        atData.delete(session.id);
        const accepted = !('stall' in answer) && !('drop' in answer) && answer.code < 300;
        if (accepted) {
          sink.messages.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            raw: Buffer.concat(chunks),
            secure: session.secure,
            connection: sockets.get(session.remotePort)?.ordinal ?? 0,
            remoteAddress: session.remoteAddress,
          });
        }
        apply(answer, session, callback);
      });
    },
  });
  // Clients that give up mid-session make smtp-server report socket errors: expected here.
  server.on('error', () => undefined);
  server.server.prependListener('connection', (socket: Socket) => {
    opened++;
    const port = socket.remotePort ?? 0;
    sockets.set(port, { all: [socket], ordinal: opened });
    maxOpen = Math.max(maxOpen, sockets.size);
    socket.once('close', () => sockets.delete(port));
  });
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as { port: number }).port;

  let stopping: Promise<void> | undefined;
  Object.assign(sink, {
    host: '127.0.0.1' as const,
    port,
    address: `127.0.0.1:${port}`,
    messages: [],
    rcpts: [],
    answerFor: (rcpt: string, ...answers: SinkAnswer[]) => perRcpt.set(rcpt.toLowerCase(), [...(perRcpt.get(rcpt.toLowerCase()) ?? []), ...answers]),
    answerNext: (...answers: SinkAnswer[]) => perCall.push(...answers),
    holdGreetings: (n: number) => void (holds += n),
    dropConnections: (n: number) => void (drops += n),
    refuseGreetings: (...answers: { code: number; text: string }[]) => void greetingRefusals.push(...answers),
    stats: () => ({ opened, open: sockets.size, maxOpen }),
    waitForMessages: (n: number, timeoutMs = 10_000) =>
      pollUntil(`${n} message(s) at the sink`, () => (sink.messages.length >= n ? sink.messages : undefined), timeoutMs),
    reset: () => {
      sink.messages.length = 0;
      sink.rcpts.length = 0;
      perRcpt.clear();
      perCall = [];
      greetingRefusals = [];
      holds = drops = 0;
      opened = sockets.size;
      maxOpen = sockets.size;
    },
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        // Held and stalled sessions would keep close() waiting for its 30 s grace.
        for (const port of sockets.keys()) destroy(port);
        server.close(() => resolve());
      })),
  });
  t.teardown(() => sink.stop());
  return sink;
}
