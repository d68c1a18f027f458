// Small process-level helpers for tests that start real servers: free ports, stop-once teardown.
import { createServer } from 'node:net';

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** Makes `stop` run at most once, and at teardown if the test did not call it. */
export function stopOnTeardown<T extends { stop(): Promise<void> }>(t: { teardown(fn: () => unknown): void }, running: T): T {
  let stopped = false;
  const stop = running.stop.bind(running);
  running.stop = async () => {
    stopped = true;
    await stop();
  };
  t.teardown(() => (stopped ? undefined : stop()));
  return running;
}
