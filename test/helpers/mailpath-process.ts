// Runs the real `mailpath start` as a child process on loopback ports, and talks HTTPS to it: for multi-process and crash tests.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../shared/kernel/paths.js';
import { mailpathArgs } from './cli.js';
import { freePort } from './net.js';

const agent = new Agent({ keepAlive: true, rejectUnauthorized: false });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** One HTTPS request to 127.0.0.1 (self-signed certificate) with a timeout. */
export function https(port: number, method: string, path: string, options: { token?: string; body?: unknown; timeoutMs?: number } = {}): Promise<HttpsAnswer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  const headers: Record<string, string> = {};
  if (options.token) headers['authorization'] = `Bearer ${options.token}`;
  if (payload !== undefined) {
    headers['content-type'] = 'application/json';
    headers['content-length'] = String(Buffer.byteLength(payload));
  }
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path: `/api/v1${path}`, headers, agent, timeout: options.timeoutMs ?? 5000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // keep the text
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

export interface MailpathProcess {
  child: ChildProcess;
  httpsPort: number;
  /** The MX role's SMTP port (a free one unless env sets MAILPATH_MX_PORT). */
  mxPort: number;
  output(): string;
  /** Everything written to stdout so far (the JSON log), in full. */
  log(): string;
  /** SIGKILL: no shutdown, no flushing. */
  kill(): Promise<void>;
  /** SIGTERM (SIGKILL after 5 s), then removes the data dir. */
  stop(): Promise<void>;
}

/**
 * Spawns `mailpath start` with `env` on top of a loopback, quiet base; waits until HTTPS answers (at most 60 s:
 * from source, tsx compiles the tree at each start, which takes 20 s and more on a loaded 2-core machine).
 */
export async function startMailpathProcess(env: Record<string, string>): Promise<MailpathProcess> {
  // A port found free can be taken by another test file's server before the child binds it: such a start is tried
  // again on other ports (at most three tries).
  let attempt = 1;
  while (true) {
    try {
      return await startOnce(env);
    } catch (err) {
      if (attempt++ >= 3 || !PORT_TAKEN.test((err as Error).message)) throw err;
    }
  }
}

const PORT_TAKEN = /mailpath exited with 1:[\s\S]*MAILPATH_\w+_PORT \d+ is in use/;

async function startOnce(env: Record<string, string>): Promise<MailpathProcess> {
  const [httpsPort, httpPort] = [await freePort(), await freePort()];
  // Every role runs unless env says otherwise: the MX must not collide with another process's.
  const mxPort = env['MAILPATH_MX_PORT'] ? Number(env['MAILPATH_MX_PORT']) : await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'mailpath-proc-'));
  const child = spawn(process.execPath, mailpathArgs('start'), {
    cwd: projectRoot(),
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? tmpdir(),
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_HTTPS_PORT: String(httpsPort),
      MAILPATH_HTTP_PORT: String(httpPort),
      // No operator port: an ephemeral one can be the very port a freePort() above handed out for another listener.
      MAILPATH_METRICS_PORT: 'off',
      MAILPATH_VALIDATE_RESPONSES: 'true',
      MAILPATH_MX_PORT: String(mxPort),
      MAILPATH_DATA_DIR: dataDir,
      MAILPATH_ADMIN_PASSWORD: 'Root-password-123',
      MAILPATH_LOG_LEVEL: 'warn',
      MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let log = '';
  const keep = (c: Buffer) => (output = (output + c.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stdout!.on('data', (c: Buffer) => (log += c.toString()));
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const running = () => child.exitCode === null && child.signalCode === null;
  const proc: MailpathProcess = {
    child,
    httpsPort,
    mxPort,
    output: () => output,
    log: () => log,
    async kill() {
      if (running()) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (running()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (!running()) {
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`mailpath exited with ${child.exitCode ?? child.signalCode}:\n${output}`);
    }
    const up = await https(httpsPort, 'GET', '/whoami').then(
      (r) => r.status === 401,
      () => false,
    );
    if (up) return proc;
    await sleep(100);
  }
  await proc.stop();
  throw new Error(`mailpath on port ${httpsPort} did not come up:\n${output}`);
}

export interface SpawnedMailpath {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit status (null and the signal when killed); rejects after `timeoutMs` (the process is then killed). */
  exit(timeoutMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Spawns `mailpath start` without waiting for it (start-up failures, output order): loopback,
 * cheap bcrypt, then `env` (ports, data dir, database). With `outputFile`, stdout and stderr both
 * go to that file in the order they were written (stdout() and stderr() are then empty).
 */
export function spawnMailpath(env: Record<string, string>, options: { outputFile?: string } = {}): SpawnedMailpath {
  const fd = options.outputFile === undefined ? undefined : openSync(options.outputFile, 'a');
  const child = spawn(process.execPath, mailpathArgs('start'), {
    cwd: projectRoot(),
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? tmpdir(),
      MAILPATH_BIND_HOST: '127.0.0.1',
      MAILPATH_LOG_LEVEL: 'warn',
      MAILPATH_CONFIG__AUTH__BCRYPT_COST: '4',
      ...env,
    },
    stdio: fd === undefined ? ['ignore', 'pipe', 'pipe'] : ['ignore', fd, fd],
  });
  if (fd !== undefined) closeSync(fd);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    async exit(timeoutMs = 60_000) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          child.kill('SIGKILL');
          reject(new Error(`mailpath did not exit within ${timeoutMs} ms:\n${stdout}\n${stderr}`));
        }, timeoutMs);
      });
      try {
        return await Promise.race([exited, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
