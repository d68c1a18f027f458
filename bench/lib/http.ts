// HTTPS requests to a local Mailpath (self-signed certificate) for the benchmarks: JSON set-up steps, and timed requests that never reject.
import { request, type Agent } from 'node:https';

/** Resolves the parsed JSON body of a 2xx answer; rejects with the status and body otherwise. */
export function httpsJson(port: number, method: 'GET' | 'POST', path: string, body?: unknown, token?: string): Promise<any> {
  const payload = body === undefined ? '' : JSON.stringify(body);
  const headers: Record<string, string | number> = { ...(token ? { authorization: `Bearer ${token}` } : {}) };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = Buffer.byteLength(payload);
  }
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, rejectUnauthorized: false, timeout: 10_000, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text}`));
        else resolve(JSON.parse(text));
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

export interface TimedAnswer {
  /** The HTTP status, or 0 when the request failed or timed out (see `error`). */
  status: number;
  body: string;
  /** From the request's start until its answer was read (or it failed). */
  ms: number;
  error?: string;
}

/**
 * One HTTPS request to a local Mailpath that never rejects: any status, a timeout or a socket error is an answer, timed
 * (for load generators that count answers by status). `agent` keeps the connections of one caller apart from another's.
 */
export function timedRequest(
  port: number,
  o: {
    method: string;
    path: string;
    agent: Agent;
    token?: string;
    body?: string | Buffer;
    contentType?: string;
    headers?: Record<string, string>;
    timeoutMs: number;
  },
): Promise<TimedAnswer> {
  const headers: Record<string, string | number> = { ...o.headers, ...(o.token ? { authorization: `Bearer ${o.token}` } : {}) };
  if (o.body !== undefined) {
    headers['content-type'] = o.contentType ?? 'application/json';
    headers['content-length'] = Buffer.byteLength(o.body);
  }
  const started = performance.now();
  return new Promise((resolve) => {
    let answered = false;
    const done = (status: number, body: string, error?: string) => {
      if (answered) return;
      answered = true;
      clearTimeout(timer);
      resolve({ status, body, ms: performance.now() - started, ...(error ? { error } : {}) });
    };
    const req = request({ host: '127.0.0.1', port, path: o.path, method: o.method, agent: o.agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => done(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
      res.on('error', (err) => done(0, '', err.message));
    });
    // From the start, waiting for a socket of the agent and sending the body included (a socket timeout is only idleness).
    const timer = setTimeout(
      () => {
        done(0, '', `no answer within ${Math.round(o.timeoutMs)} ms`);
        req.destroy();
      },
      Math.max(1, o.timeoutMs),
    );
    req.on('error', (err) => done(0, '', err.message));
    req.end(o.body);
  });
}
