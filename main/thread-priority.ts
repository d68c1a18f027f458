// Runs a Mailpath process's helper threads (libuv's pool: DKIM signatures, password hashes, file reads; V8's garbage-collector and compiler helpers) at a lower
// scheduling priority than its event loop, on Linux.
import { randomFill } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/** The nice value the helpers get: `lower` below the event loop's own, at most 19 (a process started under `nice` keeps the order). */
export function helperNice(eventLoopNice: number, lower: number): number {
  return Math.min(19, eventLoopNice + lower);
}

/** libuv starts every thread of its pool with the first task: after this they all exist, to be lowered too. */
function startThreadPool(): Promise<void> {
  return new Promise((resolve) => randomFill(Buffer.alloc(1), () => resolve()));
}

/**
 * Why: the event loop is the one thread every message, request and hit waits for (the gates, the database client, SMTP,
 * HTTP), while the helpers' work (an RSA signature, a bcrypt hash) is batch work that may wait a little. Linux's
 * scheduler favours threads that used less CPU, which the helpers always have: in the campaign bench the outbound event
 * loop waited for a core 26 % of the run, behind them; with them lowered, 19 %, and 9 % more messages went out per
 * second (three interleaved pairs of runs). Lowering is always allowed (raising back is not, without privileges).
 * Threads started later (e.g. worker threads) take the event loop's priority. Elsewhere than Linux (no /proc/self/task,
 * where setpriority on a thread id means something else) nothing is done. Answers how many threads were lowered.
 */
export async function lowerHelperThreads(lower: number): Promise<number> {
  if (lower === 0 || process.platform !== 'linux') return 0;
  await startThreadPool();
  const nice = helperNice(getPriority(process.pid), lower);
  let lowered = 0;
  for (const tid of readdirSync('/proc/self/task')) {
    // On Linux the main thread's id is the process id; every other entry is one of its helper threads.
    if (tid === String(process.pid)) continue;
    try {
      setPriority(Number(tid), nice);
      lowered++;
    } catch {
      // The thread ended meanwhile.
    }
  }
  return lowered;
}
