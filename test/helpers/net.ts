// Small process-level helpers for tests that start real servers: free ports, stop-once teardown.
import { createServer } from 'node:net';

/**
 * Ports handed out come from below the kernel's ephemeral range (32768-60999 on Linux): a port the OS picks for
 * someone's outgoing connection or `listen(0)` can never be one of these, so a port freed here stays free until the
 * test binds it. Each test process starts at its own place in the range (from its pid) and walks on from there.
 */
const RANGE = { first: 20_000, size: 12_000 };
let nextOffset = (process.pid * 7919) % RANGE.size;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port free on 127.0.0.1 now, outside the ephemeral range, not handed out before by this process. */
export async function freePort(): Promise<number> {
  for (let tries = 0; tries < RANGE.size; tries++) {
    const port = RANGE.first + (nextOffset++ % RANGE.size);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${RANGE.first}-${RANGE.first + RANGE.size - 1}`);
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
