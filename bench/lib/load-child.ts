// Child process of bench/analytics.ts: autocannon in a process of its own, each request to a path drawn at random from
// a list (read as JSON from stdin), so every connection spreads its hits over the whole list.
//
// Why a process and not autocannon's `requests` list in a worker thread: with a list, every connection walks it from
// its first entry in the same order, so the 50 connections keep hitting the same few paths at the same moment (four
// links of one send, then of the next): a traffic no mail list makes, whose hits all wait on one another's row locks.
// A per-request choice needs a function, which autocannon runs only on its own thread; a process of its own also keeps
// the load's CPU apart from the server's (it prints its own, and the machine's over the run).
import autocannon from 'autocannon';
import { machineBusySeconds } from './cpu.js';

export interface LoadRequest {
  url: string;
  connections: number;
  seconds: number;
  /** Paths (with their query) under url; each request takes one at random. Empty: url itself. */
  paths: string[];
}

export interface LoadResult {
  reqPerSec: number;
  p50: number;
  p99: number;
  ok: number;
  failed: number;
  errors: number;
  /** CPU seconds this load generator used while it ran. */
  cpuSeconds: number;
  /** Cores the whole machine kept busy on average while the load ran. */
  machineCores: number;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const request = JSON.parse(await readStdin()) as LoadRequest;
const { paths } = request;
const cpuBefore = process.cpuUsage();
const machineBefore = machineBusySeconds();
const startedAt = performance.now();
const result = await autocannon({
  url: request.url,
  connections: request.connections,
  pipelining: 1,
  duration: request.seconds,
  requests: [
    {
      method: 'GET',
      setupRequest: (req) => (paths.length > 0 ? { ...req, path: paths[Math.floor(Math.random() * paths.length)]! } : req),
    },
  ],
});
const cpu = process.cpuUsage(cpuBefore);
const out: LoadResult = {
  reqPerSec: result.requests.average,
  p50: result.latency.p50,
  p99: result.latency.p99,
  ok: result['2xx'] + result['3xx'],
  failed: result['4xx'] + result['5xx'],
  errors: result.errors + result.timeouts,
  cpuSeconds: (cpu.user + cpu.system) / 1e6,
  machineCores: (machineBusySeconds() - machineBefore) / ((performance.now() - startedAt) / 1000),
};
process.stdout.write(`${JSON.stringify(out)}\n`);
