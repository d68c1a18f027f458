// A real HTTP webhook receiver on 127.0.0.1 that records every request's exact bytes and answers as the test scripts it (status, Retry-After, hang, drop).
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A status with optional headers and body; `hang` never answers (until stop); `drop` closes the connection unanswered. */
export type ReceiverAnswer = { status: number; headers?: Record<string, string>; body?: string } | { hang: true } | { drop: true };

export interface WebhookReceiver {
  /** http://127.0.0.1:<port>/hook */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** TCP connections accepted so far: 0 proves nothing reached the receiver at all. */
  connections(): number;
  /** The answer to every request from now on (200 until set). */
  answer(answer: ReceiverAnswer): void;
  /** Answers for the next requests, in order; afterwards the standing answer applies again. */
  answerNext(...answers: ReceiverAnswer[]): void;
  stop(): Promise<void>;
}

export async function startWebhookReceiver(t?: { teardown(fn: () => unknown): void }): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const sockets = new Set<Socket>();
  let standing: ReceiverAnswer = { status: 200, body: 'ok' };
  const queued: ReceiverAnswer[] = [];
  let accepted = 0;

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      const answer = queued.shift() ?? standing;
      if ('hang' in answer) return;
      if ('drop' in answer) {
        req.socket.destroy();
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? '');
    });
  });
  server.on('connection', (socket: Socket) => {
    accepted++;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as { port: number }).port;

  let stopping: Promise<void> | undefined;
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    requests,
    connections: () => accepted,
    answer: (answer) => {
      standing = answer;
    },
    answerNext: (...answers) => {
      queued.push(...answers);
    },
    stop: () =>
      (stopping ??= new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      })),
  };
  t?.teardown(() => receiver.stop());
  return receiver;
}
