// Postfix as the benchmarks' comparison peer, always through ../shared/bench/postfix-peer.sh, which installs Postfix on first use.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../shared/kernel/paths.js';
import { freePort } from '../../test/helpers/net.js';
import { SMTP_SOURCE } from './smtp-load.js';

const run = promisify(execFile);
export const PEER = join(projectRoot(), '..', 'shared', 'bench', 'postfix-peer.sh');

const peer = async (...args: string[]): Promise<string> => (await run('bash', [PEER, ...args], { maxBuffer: 1 << 20 })).stdout.trim();

/**
 * Makes sure Postfix and its tools (smtp-source, smtp-sink) are installed before a bench measures
 * anything, whichever bench runs first on a fresh machine. The peer script has no install verb: its
 * `sink` installs what is missing, so a sink is started on a free port and stopped at once.
 */
export async function ensurePostfix(): Promise<void> {
  if (!existsSync(PEER)) throw new Error(`${PEER} not found: it runs Postfix, the comparison peer`);
  if (existsSync(SMTP_SOURCE) && existsSync('/usr/sbin/postfix')) return;
  process.stdout.write('  (installing Postfix through postfix-peer.sh)\n');
  const pid = Number(await peer('sink', String(await freePort())));
  if (pid > 0) process.kill(pid, 'SIGTERM');
  if (!existsSync(SMTP_SOURCE)) throw new Error(`postfix-peer.sh did not install Postfix (${SMTP_SOURCE} is missing)`);
}

/** Starts Postfix's smtp-sink (no disk) on `port`; returns a function stopping it. */
export async function startSink(port: number): Promise<() => void> {
  const pid = Number(await peer('sink', String(port)));
  return () => {
    if (pid > 0) process.kill(pid, 'SIGTERM');
  };
}

/** Postfix accepting on 127.0.0.1:`listen` and relaying everything to 127.0.0.1:`sinkPort`. */
export const startPostfix = (listen: number, sinkPort: number): Promise<string> => peer('start', String(listen), String(sinkPort));
/** How many messages Postfix still holds. */
export const postfixQueued = async (): Promise<number> => Number(await peer('queued'));
/** Stops Postfix and restores its configuration; never throws. */
export const stopPostfix = async (): Promise<void> => {
  await peer('stop').catch(() => {});
};
