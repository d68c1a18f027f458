// What smtp-server gives no hook for, added to each connection: the greeting delay and pregreet test, a session time limit, a helo phase before EHLO/HELO is
// answered, the raw source route of RCPT, and SIZE= left to the limits plugin.
import type { SMTPServer, SMTPServerSession } from 'smtp-server';
import type { SMTPConnection } from 'smtp-server/lib/smtp-connection.js';
import { LOCAL_ERROR } from '../smtp/replies.js';
import type { PregreetTest } from './pregreet.js';
import { tooManyConnections } from './replies.js';

/** A reply to send in place of the library's (text without enhanced code for EHLO/HELO, RFC 2034 §3). */
export interface ConnectionReply {
  code: number;
  text: string;
}

export interface ConnectionHooks {
  /** Runs before EHLO/HELO is answered; a reply refuses the greeting. */
  helo(session: SMTPServerSession, name: string): Promise<ConnectionReply | undefined>;
}

export interface ConnectionOptions {
  /** Pause before the 220 greeting for every client; smtp-server's own is a fixed 100 ms. */
  greetingDelayMs: number;
  /** The longer pause for clients not seen lately (pregreet.ts). */
  pregreet: PregreetTest;
  /** For the log: a client passed the pregreet test, or talked before the greeting and was dropped. */
  onPregreet(outcome: 'passed' | 'talked-early', remoteAddress: string, pausedMs: number): void;
  /** The longest a session may last: a client trickling bytes under the idle timeout (slow-loris) is cut here. */
  maxSessionMs: number;
}

/**
 * The source route (`@a,@b:`) the client put before the RCPT address now being handled, which
 * smtp-server strips before the application sees the address (RFC 5321 §3.6.1 lets a server ignore
 * it). onRcptTo reads it synchronously: the library calls it within handling the same command.
 */
const sourceRoutes = new WeakMap<SMTPServerSession, string>();
const SOURCE_ROUTE = /^\s*RCPT\s+TO\s*:\s*<\s*(@[^:<>]*):/i;

export function sourceRouteOf(session: SMTPServerSession): string | undefined {
  return sourceRoutes.get(session);
}

/**
 * Instruments every connection of `server` as the library creates it (before its init()). These
 * replace parts of smtp-server's connection (typed in its declarations, so an incompatible release
 * fails to compile; the MX tests exercise each).
 */
export function attachConnectionHooks(server: SMTPServer, hooks: ConnectionHooks, options: ConnectionOptions): void {
  const connections = server.connections as Set<SMTPConnection>;
  const add = connections.add.bind(connections);
  connections.add = (connection: SMTPConnection) => {
    instrument(connection, server, hooks, options);
    return add(connection);
  };
}

function instrument(connection: SMTPConnection, server: SMTPServer, hooks: ConnectionHooks, options: ConnectionOptions): void {
  // init() as the library's, with the pause before the greeting configurable: its fixed 100 ms
  // (to catch clients that talk first) caps a sender using one connection per message at 10 a second.
  connection.init = () => {
    connection._setListeners(() => {
      const max = server.options.maxClients;
      if (max && server.connections.size > max)
        return connection.send(421, `4.3.2 ${connection.name} Too many connected clients, try again in a moment`, false);
      pauseBeforeGreeting(connection, options);
    });
    limitSession(connection, options.maxSessionMs);
  };

  for (const command of ['EHLO', 'HELO'] as const) {
    const original = connection[`handler_${command}`].bind(connection);
    connection[`handler_${command}`] = (line: Buffer, callback: () => void) => {
      const parts = line.toString().trim().split(/\s+/);
      // A malformed greeting is answered by the library as it is.
      if (parts.length !== 2) return original(line, callback);
      hooks.helo(connection.session, parts[1]!).then(
        (reply) => {
          if (!reply) return original(line, callback);
          connection.send(reply.code, reply.text, false);
          callback();
        },
        () => {
          // EHLO/HELO replies carry no enhanced code (RFC 2034 §3).
          connection.send(LOCAL_ERROR.code, LOCAL_ERROR.text, false);
          callback();
        },
      );
    };
  }

  const rcpt = connection.handler_RCPT.bind(connection);
  connection.handler_RCPT = (line: Buffer, callback: () => void) => {
    const route = SOURCE_ROUTE.exec(line.toString())?.[1];
    if (route === undefined) return rcpt(line, callback);
    sourceRoutes.set(connection.session, route);
    try {
      rcpt(line, callback);
    } finally {
      sourceRoutes.delete(connection.session);
    }
  };

  // The library refuses a SIZE= over its limit itself, with a reply that names no enhanced code;
  // the limits plugin gives the precise one (552 5.3.4), so the library only checks the syntax.
  const validate = connection._validateMailParams.bind(connection);
  connection._validateMailParams = (parsed) => {
    const args = parsed.args;
    if (!args || typeof args['SIZE'] !== 'string' || !/^\d{1,20}$/.test(args['SIZE'])) return validate(parsed);
    const { SIZE: _size, ...rest } = args;
    return validate({ ...parsed, args: rest });
  };
}

/**
 * Waits the pause before the greeting: greeting_delay_ms for every client, the pregreet wait for
 * an address without a running pass. Any byte the client sends before the 220 (not only a whole
 * command, which is all the library would notice) is answered 421 and the connection closed,
 * before the connect hooks run. An address that stayed quiet through the pregreet wait and was
 * greeted passes. Connections of one address in the pause are capped, as they are after it.
 */
function pauseBeforeGreeting(connection: SMTPConnection, options: ConnectionOptions): void {
  const { pregreet } = options;
  const address = connection.remoteAddress;
  const testing = pregreet.mustWait(address);
  const pauseMs = testing ? Math.max(options.greetingDelayMs, pregreet.waitMs) : options.greetingDelayMs;
  if (pauseMs <= 0) return connection.connectionReady();
  if (testing && !pregreet.enter(address)) {
    return connection.send(421, tooManyConnections().message, false);
  }
  const socket = connection._socket;
  const started = Date.now();
  const timer = setTimeout(() => {
    if (!connection._closing) connection.connectionReady();
  }, pauseMs);
  timer.unref();
  let settled = false;
  const settle = () => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    socket.off('data', early);
    if (testing) pregreet.leave(address);
  };
  // Before the library's parser sees the bytes: this reply is the one the client gets.
  const early = () => {
    settle();
    // Bytes after a refusal by the connect hooks are not an early talk: the connection is closing.
    if (connection._closing) return;
    options.onPregreet('talked-early', address, Date.now() - started);
    connection.send(421, `4.5.0 ${connection.name} protocol error: talked before the greeting, closing connection`, false);
  };
  socket.prependListener('data', early);
  socket.once('close', settle);
  const greet = connection._sendGreeting.bind(connection);
  connection._sendGreeting = () => {
    // The connect hooks ran after the pause (and did not refuse): the client is greeted now.
    settle();
    if (testing) {
      pregreet.pass(address);
      options.onPregreet('passed', address, Date.now() - started);
    }
    greet();
  };
}

/**
 * Tells the client 421 and closes once the session has lasted `ms`, whatever it is doing: the idle
 * timeout restarts at every byte, so without this a client sending one byte at a time holds its
 * connection for ever. A message cut off in DATA is not stored. While a reply is owed (a handler
 * or the commit after the final dot still running) the cut waits for it: a 421 then could make the
 * client send a message again that is being stored.
 */
function limitSession(connection: SMTPConnection, ms: number): void {
  let timer: NodeJS.Timeout;
  const cut = () => {
    if (connection._closing || connection._closed) return;
    const replyOwed = connection._handlerPending || (connection._dataStream && connection._parser && !connection._parser._dataMode);
    if (replyOwed) {
      timer = setTimeout(cut, 1000).unref();
      return;
    }
    connection.send(421, `4.4.2 ${connection.name} session time limit reached, closing connection`, false);
  };
  timer = setTimeout(cut, ms).unref();
  connection._socket.once('close', () => clearTimeout(timer));
}
