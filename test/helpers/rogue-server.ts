// Misbehaving line-protocol servers (POP3, SMTP) on 127.0.0.1 for tests: each greets (or does not) as scripted and answers command lines as scripted; every
// socket and timer ends at teardown.
import { createServer, type Server, type Socket } from 'node:net';

export interface RogueServer {
  port: number;
  /** Connections accepted so far. */
  connections(): number;
  /** Bytes the server's script managed to hand to the socket before it closed (see `flood`). */
  bytesWritten(): number;
}

/** What a rogue server does: on connect, and on each command line the client sends (USER ..., EHLO ..., ...). */
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

export async function startRogueServer(t: { teardown(fn: () => unknown): void }, script: RogueScript): Promise<RogueServer> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let accepted = 0;
  let written = 0;
  const control: RogueControl = {
    drip: dripper(timers),
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
  const port = await listenUntilTeardown(t, server, timers, sockets);
  return { port, connections: () => accepted, bytesWritten: () => written };
}

/** Writes `bytes` one byte per `everyMs` until the socket closes; its timer joins `timers` (cleared at teardown). */
export function dripper(timers: Set<NodeJS.Timeout>): RogueControl['drip'] {
  return (socket, bytes, everyMs) => {
    let i = 0;
    const timer = setInterval(() => {
      if (socket.destroyed || i >= bytes.length) {
        clearInterval(timer);
        return;
      }
      socket.write(bytes[i++]!);
    }, everyMs);
    timers.add(timer);
  };
}

/** Listens on a free loopback port; at teardown every timer is cleared, every socket destroyed and the server closed. */
export async function listenUntilTeardown(
  t: { teardown(fn: () => unknown): void },
  server: Server,
  timers: Set<NodeJS.Timeout>,
  sockets: Set<Socket>,
): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearInterval(timer);
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return (server.address() as { port: number }).port;
}
