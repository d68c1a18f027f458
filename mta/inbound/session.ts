// The smtp-server handlers of an MX session: each SMTP step runs its hook phase (connect → helo → mail → rcpt → data → queue) and replies with the decision.
import { randomUUID } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { domainToASCII } from 'node:url';
import type { SMTPServerAddress, SMTPServerDataStream, SMTPServerOptions, SMTPServerSession } from 'smtp-server';
import type { Logger } from '../../shared/kernel/log.js';
import type { HookRunner } from '../hooks/runner.js';
import type { Recipient, ReceivedMessage, SessionInfo, Transaction } from '../hooks/phases.js';
import { sourceRouteOf, type ConnectionHooks } from './connection-hooks.js';
import { receivedHeader } from './received.js';
import { readData } from '../smtp/data.js';
import { errorFor, tooManyConnections, unsupportedParameter } from './replies.js';
import { isSmtpError, messageTooBig, notReceivedInFull, shuttingDown, temporaryFailure, type SmtpError } from '../smtp/replies.js';
import { observed, SessionLog } from '../smtp/transaction-log.js';

/** The MAIL FROM parameters of the extensions the MX advertises (SIZE, 8BITMIME, SMTPUTF8); RCPT TO takes none (no DSN). */
const MAIL_PARAMETERS = new Set(['SIZE', 'BODY', 'SMTPUTF8']);

export interface MxSessionContext {
  runner: HookRunner;
  hostname: string;
  log: Logger;
  /** The size smtp-server counts DATA against: past it the bytes are counted, not kept. */
  maxMessageBytes: number;
  now(): Date;
  /** True once stop() was called: new transactions are turned away. */
  stopping(): boolean;
  /** Tracks DATA work so stop() can wait for it. */
  track(work: Promise<unknown>): void;
  /** Simultaneous connections one client address may hold; past it new ones are told 421. */
  maxClientsPerAddress: number;
}

type Handlers = Required<Pick<SMTPServerOptions, 'onConnect' | 'onSecure' | 'onMailFrom' | 'onRcptTo' | 'onData' | 'onClose'>>;
type Callback = (err?: Error | null, message?: string) => void;

interface SessionState {
  info: SessionInfo;
  transaction: Transaction | undefined;
  /** The session's part of the mail log. */
  mail: SessionLog;
}

/** What DATA learnt for the log line: the size the client sent and the id the message was stored under. */
interface DataFacts {
  size: number | null;
  storedId: string | undefined;
}

/** The handlers of the listener, and the helo hook its connections call; per-session state lives here. */
export function sessionHandlers(ctx: MxSessionContext): Handlers & ConnectionHooks {
  const states = new Map<string, SessionState>();
  // Open connections per client address, and the sessions counted in them (a refused one is not).
  const perAddress = new Map<string, number>();
  const counted = new Map<string, string>();

  const stateOf = (session: SMTPServerSession): SessionState => {
    let state = states.get(session.id);
    if (!state) {
      let log: Logger | undefined;
      const info: SessionInfo = {
        id: session.id,
        remoteAddress: session.remoteAddress,
        remotePort: session.remotePort,
        clientHostname: session.clientHostname,
        secure: session.secure,
        helo: undefined,
        protocol: 'ESMTP',
        // Made when first used: most sessions never log.
        get log() {
          return (log ??= ctx.log.child({ session: session.id, remote: session.remoteAddress }));
        },
      };
      states.set(session.id, (state = { info, transaction: undefined, mail: new SessionLog(ctx.log, session) }));
    }
    // What smtp-server learnt since (STARTTLS, EHLO) is read again at each step.
    state.info.secure = session.secure;
    if (session.hostNameAppearsAs) state.info.helo = session.hostNameAppearsAs;
    if (session.transmissionType) state.info.protocol = session.transmissionType;
    return state;
  };

  /** Answers with a phase's outcome: nothing for an acceptance (the library's own 250), else the refusal. */
  const reply = (outcome: Promise<SmtpError | undefined>, callback: Callback) => {
    outcome.then(
      (err) => callback(err ?? null),
      (err: unknown) => {
        ctx.log.error({ err }, 'MX session step failed');
        callback(temporaryFailure());
      },
    );
  };

  return {
    onConnect(session, connected) {
      const callback = observed(connected, (r) => r.code >= 400 && stateOf(session).mail.refused(r));
      if (ctx.stopping()) return callback(shuttingDown());
      // One address holding many connections (slow clients, a flood) must not take every slot of max_clients.
      const open = perAddress.get(session.remoteAddress) ?? 0;
      if (open >= ctx.maxClientsPerAddress) {
        return callback(tooManyConnections());
      }
      perAddress.set(session.remoteAddress, open + 1);
      counted.set(session.id, session.remoteAddress);
      const state = stateOf(session);
      reply(
        ctx.runner.run('connect', { session: state.info }).then((o) => errorFor(o.decision)),
        callback,
      );
    },

    onSecure(socket, session, callback) {
      // STARTTLS starts the session over (RFC 3207 §4.2): nothing from before it carries on.
      const state = stateOf(session);
      state.mail.secured(socket as TLSSocket);
      state.transaction = undefined;
      state.info.helo = undefined;
      callback();
    },

    async helo(session, name) {
      const state = stateOf(session);
      const { decision } = await ctx.runner.run('helo', { session: state.info, helo: name });
      if (decision.kind === 'accept') return undefined;
      state.mail.refused({ code: decision.code, text: decision.text });
      return { code: decision.code, text: decision.text };
    },

    onMailFrom(address: SMTPServerAddress, session, answered) {
      const state = stateOf(session);
      const callback = observed(answered, (r) => state.mail.mail(address.address ?? '', r));
      if (ctx.stopping()) return callback(shuttingDown());
      const transaction: Transaction = {
        id: randomUUID(),
        mailFrom: address.address ?? '',
        mailParams: upperKeys(address.args),
        recipients: [],
        headers: [],
      };
      state.transaction = undefined;
      const unsupported = Object.keys(transaction.mailParams).find((name) => !MAIL_PARAMETERS.has(name));
      if (unsupported !== undefined) return callback(unsupportedParameter('MAIL FROM', unsupported));
      reply(
        ctx.runner.run('mail', { session: state.info, transaction }).then(({ decision }) => {
          if (decision.kind === 'accept') state.transaction = transaction;
          return errorFor(decision);
        }),
        callback,
      );
    },

    onRcptTo(address: SMTPServerAddress, session, answered) {
      const state = stateOf(session);
      const callback = observed(answered, (r) => state.mail.rcpt(address.address, r));
      const transaction = state.transaction;
      // The library answers 503 to RCPT before MAIL; a MAIL we refused leaves no transaction either.
      if (!transaction) return callback(errorFor({ kind: 'reject', code: 503, enhanced: '5.5.1', text: 'need MAIL command' }));
      const parameter = Object.keys(upperKeys(address.args))[0];
      if (parameter !== undefined) return callback(unsupportedParameter('RCPT TO', parameter));
      const recipient: Recipient = { address: normalizeAddress(address.address), sourceRoute: sourceRouteOf(session) };
      reply(
        ctx.runner.run('rcpt', { session: state.info, transaction, recipient }).then(({ decision }) => {
          if (decision.kind !== 'accept') return errorFor(decision);
          // smtp-server keeps a repeated address once (the later RCPT wins): so does the transaction.
          const key = recipient.address.toLowerCase();
          const at = transaction.recipients.findIndex((r) => r.address.toLowerCase() === key);
          if (at >= 0) transaction.recipients[at] = recipient;
          else transaction.recipients.push(recipient);
          return undefined;
        }),
        callback,
      );
    },

    onData(stream: SMTPServerDataStream, session, answered) {
      const state = stateOf(session);
      const facts: DataFacts = { size: null, storedId: undefined };
      const callback = observed(
        answered,
        (r) => state.mail.data(r, facts.size, r.code < 400 && facts.storedId ? { inbound_id: facts.storedId } : undefined),
        450,
      );
      state.mail.dataStarted();
      const work = receive(state, stream, facts);
      ctx.track(work);
      work.then(
        (text) => callback(null, text),
        (err: unknown) => {
          if (isSmtpError(err)) return callback(err);
          state.info.log.error({ err }, 'MX DATA failed');
          callback(temporaryFailure());
        },
      );
    },

    onClose(session) {
      stateOf(session).mail.closed();
      states.delete(session.id);
      const address = counted.get(session.id);
      if (address === undefined) return;
      counted.delete(session.id);
      const open = (perAddress.get(address) ?? 1) - 1;
      if (open > 0) perAddress.set(address, open);
      else perAddress.delete(address);
    },
  };

  /** Reads the message, runs data then queue, and returns the 250 text; throws the refusal. */
  async function receive(state: SessionState, stream: SMTPServerDataStream, facts: DataFacts): Promise<string> {
    let message: ReceivedMessage;
    try {
      message = await readData(stream, ctx.maxMessageBytes);
    } catch {
      // The client went away mid-message: nothing was stored, and no one is left to answer.
      throw notReceivedInFull();
    }
    facts.size = message.size;
    const transaction = state.transaction;
    state.transaction = undefined; // a new MAIL starts the next one, whatever happens here
    if (!transaction || transaction.recipients.length === 0) throw errorFor({ kind: 'reject', code: 554, enhanced: '5.5.1', text: 'no valid recipients' })!;
    const data = await ctx.runner.run('data', { session: state.info, transaction, message });
    if (data.decision.kind !== 'accept') throw errorFor(data.decision)!;
    // Bytes that were counted, not kept, can never be stored, whatever the plugins said.
    if (message.sizeExceeded) throw messageTooBig(ctx.maxMessageBytes);
    const received = receivedHeader(ctx.hostname, state.info, transaction, ctx.now());
    const queued = await ctx.runner.run('queue', { session: state.info, transaction, message, received });
    if (queued.decision.kind !== 'accept') throw errorFor(queued.decision)!;
    facts.storedId = transaction.id;
    return queued.decision.text ?? `2.0.0 Ok: queued as ${transaction.id}`;
  }
}

/** The address with its domain in lower-case A-label form (smtp-server hands over U-labels). */
function normalizeAddress(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 0) return address;
  const domain = address.slice(at + 1).toLowerCase();
  return `${address.slice(0, at)}@${domainToASCII(domain) || domain}`;
}

function upperKeys(args: SMTPServerAddress['args']): Record<string, string | true> {
  const out: Record<string, string | true> = {};
  if (args && typeof args === 'object') for (const [k, v] of Object.entries(args)) out[k.toUpperCase()] = v as string | true;
  return out;
}
