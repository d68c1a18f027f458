// HTTPS JSON requests to a local Mailpath (self-signed certificate) for the benchmarks' set-up steps.
import { request } from 'node:https';

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
