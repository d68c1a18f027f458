// Running Mailpath in benchmarks: the built `mailpath start` as a child process, and waiting for a count to be reached.
import { spawn, type ChildProcess } from 'node:child_process';
import { projectRoot } from '../../shared/kernel/paths.js';
import { httpsJson } from './http.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until `count()` reaches `n` (polled every 100 ms, at most 10 minutes); returns when it did. */
export async function waitFor(count: () => Promise<number>, n: number, what: string): Promise<number> {
  const deadline = Date.now() + 10 * 60_000;
  for (;;) {
    const c = await count();
    if (c >= n) return performance.now();
    if (Date.now() > deadline) throw new Error(`${what}: only ${c} of ${n} after 10 minutes`);
    await sleep(100);
  }
}

export interface Child {
  pid: number;
  stop(): Promise<void>;
}

/** Starts `node dist/main/cli.js start` with `env`; with an HTTPS port, waits until it answers (at most 30 s). */
export async function startProcess(env: Record<string, string>, httpsPort: number | undefined): Promise<Child> {
  // BENCH_NODE_ARGS (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof") profiles the Mailpath processes.
  const nodeArgs = (process.env['BENCH_NODE_ARGS'] ?? '').split(' ').filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, 'dist/main/cli.js', 'start'], {
    cwd: projectRoot(),
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    }
  };
  if (httpsPort === undefined) {
    await sleep(3000);
    return { pid: child.pid!, stop };
  }
  for (let i = 0; i < 300; i++) {
    if (child.exitCode !== null) throw new Error(`mailpath exited with ${child.exitCode}`);
    const up = await httpsJson(httpsPort, 'GET', '/api/v1/whoami').then(
      () => true,
      (err: Error) => /401/.test(err.message),
    );
    if (up) return { pid: child.pid!, stop };
    await sleep(100);
  }
  await stop();
  throw new Error('mailpath did not come up within 30 s');
}
