// Misbehaving POP3 servers on 127.0.0.1 for tests: each greets (or does not) as scripted, and answers commands as scripted; every socket and timer ends at teardown.
import { createServer, type Socket } from 'node:net';

export interface RogueServer {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Bytes the server's script managed to hand to the socket before it closed (see `flood`). */
  bytesWritten(): number;
}

/** What a rogue server does: on connect, and on each command line the client sends (USER ..., PASS ..., UIDL, ...). */
export interface RogueScript {
  greet(socket: Socket, server: RogueControl): void;
  command?(line: string, socket: Socket, server: RogueControl): void;
}

export interface RogueControl {
  /** Writes `bytes` one byte per `everyMs` until the socket closes. */
  drip(socket: Socket, bytes: string, everyMs: number): void;
  /** Writes `total` bytes of `fill` as fast as the socket takes them (backpressure respected), then `after`. */
  flood(socket: Socket, prefix: string, total: number, after?: string): void;
}

export async function startRoguePop3(t: { teardown(fn: () => unknown): void }, script: RogueScript): Promise<RogueServer> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let accepted = 0;
  let written = 0;
  const control: RogueControl = {
    drip(socket, bytes, everyMs) {
      let i = 0;
      const timer = setInterval(() => {
        if (socket.destroyed || i >= bytes.length) {
          clearInterval(timer);
          return;
        }
        socket.write(bytes[i++]!);
      }, everyMs);
      timers.add(timer);
    },
    flood(socket, prefix, total, after = '') {
      socket.write(prefix);
      const chunk = Buffer.alloc(64 * 1024, 0x78);
      let left = total;
      const pump = () => {
        while (left > 0 && !socket.destroyed) {
          const piece = left >= chunk.length ? chunk : chunk.subarray(0, left);
          left -= piece.length;
          written += piece.length;
          if (!socket.write(piece)) return;
        }
        if (left === 0 && !socket.destroyed) socket.end(after);
      };
      socket.on('drain', pump);
      pump();
    },
  };
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    // The client going away mid-write is what these tests provoke: not the server's error.
    socket.on('error', () => undefined);
    let pending = '';
    socket.on('data', (chunk: Buffer) => {
      pending += chunk.toString('latin1');
      let newline: number;
      while ((newline = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, newline).replace(/\r$/, '');
        pending = pending.slice(newline + 1);
        script.command?.(line, socket, control);
      }
    });
    script.greet(socket, control);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as { port: number }).port, connections: () => accepted, bytesWritten: () => written };
}

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
  { name: 'a login answer cut mid-line, then close', script: loggingIn((line, s) => line.startsWith('PASS') && (s.end('+O'), true)), error: /^login: the server closed the connection/ },
  {
    name: 'a close during the TLS handshake',
    // The client's first bytes are its TLS ClientHello: the server hangs up on it.
    script: { greet: (s) => s.once('data', () => s.destroy()) },
    tls: true,
    error: /^login: .*during the TLS handshake$/,
  },
  { name: 'a greeting dripping one byte a second', script: { greet: (s, c) => c.drip(s, `+OK ${'slow '.repeat(200)}\r\n`, 1000) }, error: /^login: the server did not answer within 2 s$/ },
  // More than the socket buffers of both ends can hold: the server cannot write it all unless the client keeps reading.
  { name: 'a 16 MB greeting line', script: { greet: (s, c) => c.flood(s, '+OK ', FLOOD_BYTES, '\r\n') }, error: /^login: the server sent a line longer than 4096 bytes$/, floodBytes: FLOOD_BYTES },
];
