// Helpers of the SMTP benchmarks: Postfix's smtp-source as the load generator, per-process CPU from /proc, and waiting for an SMTP greeting.
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { promisify } from 'node:util';

const run = promisify(execFile);
export const SMTP_SOURCE = '/usr/sbin/smtp-source';

export interface LoadOptions {
  port: number;
  messages: number;
  sessions: number;
  /** Payload bytes per message (headers not included), as smtp-source -l. */
  bytes: number;
  from: string;
  to: string;
  /** Several messages per connection (smtp-source -d) instead of one connection per message. */
  reuseConnections?: boolean;
}

/** Runs smtp-source to completion; returns the wall-clock seconds it took. Rejects on any refusal. */
export async function smtpSource(o: LoadOptions): Promise<number> {
  const args = ['-4', '-s', String(o.sessions), '-m', String(o.messages), '-l', String(o.bytes), '-f', o.from, '-t', o.to, '-M', 'load.bench.test'];
  if (o.reuseConnections) args.push('-d');
  const started = performance.now();
  await run(SMTP_SOURCE, [...args, `127.0.0.1:${o.port}`], { maxBuffer: 1 << 24, timeout: 15 * 60_000 });
  return (performance.now() - started) / 1000;
}

/** CPU seconds (user + system) a process has used; 0 when it is gone. */
export function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds of every live process whose command name is one of `names` (e.g. all PostgreSQL backends). */
export function cpuSecondsOfCommands(names: readonly string[]): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (names.includes(readFileSync(`/proc/${entry}/comm`, 'utf8').trim())) total += cpuSecondsOf(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return total;
}

/** Resolves once a server on the port sends its 220 greeting (polled, at most `timeoutMs`). */
export async function waitForGreeting(port: number, timeoutMs: number, alive: () => boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!alive()) throw new Error(`the server on port ${port} exited before greeting`);
    const greeted = await new Promise<boolean>((resolve) => {
      const socket = connect({ host: '127.0.0.1', port });
      const done = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.setTimeout(2000, () => done(false));
      socket.once('data', (chunk: Buffer) => done(chunk.toString().startsWith('220')));
      socket.once('error', () => done(false));
    });
    if (greeted) return;
    if (Date.now() > deadline) throw new Error(`no SMTP greeting on port ${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
