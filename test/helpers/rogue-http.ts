// Misbehaving HTTP receivers on 127.0.0.1 (raw node:net, so every byte is the test's): dripping status lines and bodies, endless headers, a reset mid-body,
// garbage; every socket and timer ends at teardown.
import { createServer, type Socket } from 'node:net';
import { dripper, listenUntilTeardown } from './rogue-server.js';

export type RogueHttpMode =
  /** The answer's status line and headers, one byte a second. */
  | 'drip-head'
  /** A complete head (status `status`, Content-Length 100000), then the body one byte a second. */
  | 'drip-body'
  /** A complete head and 10 bytes of a 100000-byte body, then a TCP reset. */
  | 'reset-mid-body'
  /** A status line, then header lines without end, as fast as the socket takes them. */
  | 'endless-head'
  /** A complete head (chunked), then a body without end, as fast as the socket takes it. */
  | 'endless-body'
  /** Not HTTP at all, then silence. */
  | 'garbage';

export interface RogueHttp {
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  /** Resolves when every accepted connection has closed (the client gave up and hung up). */
  allClosed(): Promise<void>;
}

export async function startRogueHttp(t: { teardown(fn: () => unknown): void }, mode: RogueHttpMode, status = 500): Promise<RogueHttp> {
  const sockets = new Set<Socket>();
  const closed: Promise<void>[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let accepted = 0;
  const dripEverySecond = dripper(timers);
  const drip = (socket: Socket, text: string) => dripEverySecond(socket, text, 1000);
  const flood = (socket: Socket, piece: Buffer) => {
    const pump = () => {
      while (!socket.destroyed && socket.write(piece));
    };
    socket.on('drain', pump);
    pump();
  };
  const head = `HTTP/1.1 ${status} Whatever\r\ncontent-type: text/plain\r\ncontent-length: 100000\r\n\r\n`;
  const server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    closed.push(new Promise((resolve) => socket.on('close', () => resolve())));
    socket.on('error', () => undefined);
    // Answers once the request's head has arrived (its body may follow; it is not waited for).
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      if (!seen.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      socket.resume();
      if (mode === 'drip-head') drip(socket, head);
      else if (mode === 'drip-body') {
        socket.write(head);
        drip(socket, 'x'.repeat(100_000));
      } else if (mode === 'reset-mid-body') {
        socket.write(`${head}0123456789`, () => setTimeout(() => socket.resetAndDestroy(), 50));
      } else if (mode === 'endless-head') {
        socket.write(`HTTP/1.1 ${status} Whatever\r\n`);
        flood(socket, Buffer.from('x-filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n'.repeat(1000)));
      } else if (mode === 'endless-body') {
        socket.write(`HTTP/1.1 ${status} Whatever\r\ntransfer-encoding: chunked\r\n\r\n`);
        const data = Buffer.alloc(60 * 1024, 0x61);
        flood(socket, Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`), data, Buffer.from('\r\n')]));
      } else socket.write('SSH-2.0-OpenSSH_9.6\r\n');
    };
    socket.on('data', onData);
  });
  const port = await listenUntilTeardown(t, server, timers, sockets);
  return {
    url: `http://127.0.0.1:${port}/hook`,
    connections: () => accepted,
    allClosed: async () => void (await Promise.all(closed)),
  };
}
