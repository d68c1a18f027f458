// Child process of bench/neighbours.ts: tenant A, the noisy neighbour, in a process of its own (its TLS and request
// work stays off the event loop that times tenant B). Reads a NeighbourLoad as JSON from stdin, runs each kind of
// work for `seconds`, and prints every answer counted by status as JSON (NeighbourCounts).
//
// Each kind of work is issued as fast as A's documented per-key rate limit lets it (config/limits.yaml
// rate_limits.per_minute, given here as `perMinute`: at most that many requests in any 60 s, so a burst at the start,
// as the server's sliding window admits), by `concurrency` callers that each wait for their answer: the server under
// test has its own limits raised, so that B can be timed finely, and A keeps to the defaults here. Whatever the
// server answers (200, 422, 429, 503, a timeout), A carries on: a fenced server refuses A's work, it does not stop it.
import { readFile } from 'node:fs/promises';
import { Agent } from 'node:https';
import { timedRequest } from './http.js';

export interface NeighbourWork {
  /** Names the work in the counts. */
  name: string;
  method: 'GET' | 'POST';
  path: string;
  token?: string;
  body?: string;
  contentType?: string;
  /** Read from this file instead of `body` (an import's CSV). */
  bodyFile?: string;
  perMinute: number;
  concurrency: number;
}

export interface NeighbourLoad {
  port: number;
  seconds: number;
  /** A request not answered within this long counts as status 0 (timed out). */
  timeoutMs: number;
  work: NeighbourWork[];
}

/** Per work: answers by status ("0" is a timeout or a socket error), and the slowest answer. */
export type NeighbourCounts = Record<string, { statuses: Record<string, number>; maxMs: number; firstError?: string }>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * At most `perMinute` starts in any 60 s window: `take` waits until the oldest start in the window is a minute old,
 * and answers false once `deadline` (performance.now()) has passed instead.
 */
function windowBudget(perMinute: number, deadline: number): () => Promise<boolean> {
  const starts: number[] = [];
  return async () => {
    for (;;) {
      const now = performance.now();
      if (now >= deadline) return false;
      while (starts.length > 0 && now - starts[0]! >= 60_000) starts.shift();
      if (starts.length < perMinute) {
        starts.push(now);
        return true;
      }
      await sleep(Math.min(60_000 - (now - starts[0]!) + 1, deadline - now));
    }
  };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

async function run(load: NeighbourLoad): Promise<NeighbourCounts> {
  const agent = new Agent({ keepAlive: true, rejectUnauthorized: false });
  const deadline = performance.now() + load.seconds * 1000;
  const counts: NeighbourCounts = {};
  const one = async (w: NeighbourWork, body: string | Buffer | undefined, take: () => Promise<boolean>) => {
    const c = (counts[w.name] ??= { statuses: {}, maxMs: 0 });
    while (await take()) {
      const answer = await timedRequest(load.port, {
        method: w.method,
        path: w.path,
        agent,
        token: w.token,
        body,
        contentType: w.contentType,
        timeoutMs: load.timeoutMs,
      });
      c.statuses[answer.status] = (c.statuses[answer.status] ?? 0) + 1;
      c.maxMs = Math.max(c.maxMs, answer.ms);
      if (answer.status === 0 || answer.status >= 500) c.firstError ??= `${answer.status} ${answer.error ?? answer.body.slice(0, 200)}`;
      // A refused or failed request is retried after a pause, not at once: A stays at its limits, it does not spin.
      if (answer.status === 0 || answer.status === 429 || answer.status >= 500) await sleep(100);
    }
  };
  await Promise.all(
    load.work.map(async (w) => {
      const body = w.bodyFile ? await readFile(w.bodyFile) : w.body;
      const take = windowBudget(w.perMinute, deadline);
      await Promise.all(Array.from({ length: w.concurrency }, () => one(w, body, take)));
    }),
  );
  agent.destroy();
  return counts;
}

const counts = await run(JSON.parse(await readStdin()) as NeighbourLoad);
process.stdout.write(`${JSON.stringify(counts)}\n`);
