// One long-lived bash process that runs blocks of shell text in turn, as a person pasting them into a terminal would: variables and functions of one block stay
// for the next.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';

export interface BlockResult {
  /** stdout and stderr of the block, interleaved as written. */
  output: string;
  /** The exit status of the block's last command. */
  status: number;
}

export interface ShellSession {
  run(block: string, timeoutMs?: number): Promise<BlockResult>;
  close(): Promise<void>;
}

/** Starts `bash --noprofile --norc` with `env` only (no inherited variables but what is given). */
export function startShell(env: Record<string, string>): ShellSession {
  const child: ChildProcess = spawn('/bin/bash', ['--noprofile', '--norc'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let buffer = '';
  let waiter: (() => void) | undefined;
  const take = (chunk: Buffer) => {
    buffer += chunk.toString('utf8');
    waiter?.();
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  return {
    async run(block, timeoutMs = 30_000) {
      // The marker goes to stdout after the block, whose own stderr was merged into stdout: the order is kept.
      const marker = `__block_done_${randomUUID()}__`;
      buffer = '';
      child.stdin!.write(`{\n${block}\n} 2>&1\necho "${marker} $?"\n`);
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const at = buffer.indexOf(marker);
        if (at >= 0) {
          const rest = buffer.slice(at + marker.length);
          const end = rest.indexOf('\n');
          if (end >= 0) return { output: buffer.slice(0, at), status: Number(rest.slice(0, end).trim()) };
        }
        if (child.exitCode !== null) throw new Error(`the shell exited (${child.exitCode}) during:\n${block}\n${buffer}`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`the block did not finish in ${timeoutMs} ms:\n${block}\noutput so far:\n${buffer}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 1000));
          waiter = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        waiter = undefined;
      }
    },
    async close() {
      if (child.exitCode === null) {
        child.stdin!.end('exit\n');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };
}
