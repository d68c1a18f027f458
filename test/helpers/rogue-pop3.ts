// Misbehaving POP3 servers: the greetings and sessions a POP3 client must survive, on the rogue line server.
import type { Socket } from 'node:net';
import type { RogueControl, RogueScript } from './rogue-server.js';

export { startRogueServer as startRoguePop3 } from './rogue-server.js';

/** A server that logs anyone in and keeps one message (uidl "m1", `size` bytes), so a script can misbehave later in the session. */
export function loggingIn(after: (line: string, socket: Socket, server: RogueControl) => boolean, size = 100): RogueScript {
  return {
    greet: (socket) => socket.write('+OK rogue ready\r\n'),
    command(line, socket, server) {
      if (after(line, socket, server)) return;
      const verb = line.split(' ')[0]!.toUpperCase();
      if (verb === 'USER' || verb === 'PASS' || verb === 'DELE') socket.write('+OK\r\n');
      else if (verb === 'UIDL') socket.write('+OK\r\n1 m1\r\n.\r\n');
      else if (verb === 'LIST') socket.write(`+OK\r\n1 ${size}\r\n.\r\n`);
      else if (verb === 'QUIT') socket.end('+OK bye\r\n');
      else socket.write('-ERR unknown command\r\n');
    },
  };
}

const FLOOD_BYTES = 16 * 1024 * 1024;

/** The misbehaviours every POP3 client must survive, each with what its error says. */
export const ROGUE_GREETINGS: { name: string; script: RogueScript; tls?: boolean; error: RegExp; floodBytes?: number }[] = [
  { name: 'a -ERR greeting', script: { greet: (s) => s.write('-ERR go away\r\n') }, error: /^login: the server refused: go away$/ },
  { name: 'a bare - greeting, then close', script: { greet: (s) => s.end('-\r\n') }, error: /^login: the server refused/ },
  { name: 'a garbage greeting', script: { greet: (s) => s.write('HTTP/1.1 400 Bad Request\r\n\r\n') }, error: /^login: the server's answer is not POP3/ },
  { name: 'a greeting cut mid-line, then close', script: { greet: (s) => s.end('+OK Dovecot re') }, error: /^login: the server closed the connection/ },
  {
    name: 'a login answer cut mid-line, then close',
    script: loggingIn((line, s) => line.startsWith('PASS') && (s.end('+O'), true)),
    error: /^login: the server closed the connection/,
  },
  {
    name: 'a close during the TLS handshake',
    // The client's first bytes are its TLS ClientHello: the server hangs up on it.
    script: { greet: (s) => s.once('data', () => s.destroy()) },
    tls: true,
    error: /^login: .*during the TLS handshake$/,
  },
  {
    name: 'a greeting dripping one byte a second',
    script: { greet: (s, c) => c.drip(s, `+OK ${'slow '.repeat(200)}\r\n`, 1000) },
    error: /^login: the server did not answer within 2 s$/,
  },
  // More than the socket buffers of both ends can hold: the server cannot write it all unless the client keeps reading.
  {
    name: 'a 16 MB greeting line',
    script: { greet: (s, c) => c.flood(s, '+OK ', FLOOD_BYTES, '\r\n') },
    error: /^login: the server sent a line longer than 4096 bytes$/,
    floodBytes: FLOOD_BYTES,
  },
];
